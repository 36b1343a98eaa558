// The authenticate and own-party guards of every `/v1/users/:party/...` route (docs/trading.md).
// They are attached by an onRoute hook, so a route plugin only has to live under that prefix.
// With AUTH_DISABLED=true both are no-ops (the OpenAPI document still marks the routes signed, so a
// client generated from a development stack knows what production asks for).
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../http/errors.js';
import { parseSessionSig, signedPayload, SIGNATURE_WINDOW_MS, verifySignature } from './signature.js';
import { SessionKeys } from './session-keys.js';
import { ReplayMemoryFull, type ReplayGuard } from './replay-guard.js';

export { SessionKeys };

export const PARTY_ROUTE_PREFIX = '/v1/users/:party';

declare module 'fastify' {
  interface FastifyRequest {
    /** The party whose signature this request carried, once the authenticate guard passed. */
    provenParty?: string;
  }
}

export interface SignedHeaders {
  user: string;
  sessionId: string;
  sig: string;
}

const SIGNING_HEADERS = ['x-user', 'x-session-id', 'x-session-sig'] as const;

/** How many times each signing header was sent (Node joins repeated unknown headers with ", "). */
function repeatedSigningHeader(request: FastifyRequest): string | null {
  const raw = (request as { raw?: { rawHeaders?: string[] } }).raw?.rawHeaders;
  if (!raw) return null;
  const counts = new Map<string, number>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if ((SIGNING_HEADERS as readonly string[]).includes(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  for (const [name, n] of counts) if (n > 1) return name;
  return null;
}

const DISPLAY: Record<string, string> = { 'x-user': 'X-User', 'x-session-id': 'X-Session-Id', 'x-session-sig': 'X-Session-Sig' };

/**
 * Reads the three signing headers; throws 400 when one is sent more than once (or, for X-User and
 * X-Session-Sig, holds a comma: a joined duplicate), 401 when one is missing.
 */
export function signedHeaders(request: FastifyRequest): SignedHeaders {
  const h = request.headers;
  const user = h['x-user'];
  if (Array.isArray(user) || (typeof user === 'string' && user.includes(','))) {
    throw new ApiError('bad_request', 'header "X-User" must be sent exactly once with one party (duplicated party hint)');
  }
  const repeated = repeatedSigningHeader(request);
  if (repeated) throw new ApiError('bad_request', `header "${DISPLAY[repeated]}" must be sent exactly once`);
  const sessionId = h['x-session-id'];
  const sig = h['x-session-sig'];
  if (Array.isArray(sessionId) || Array.isArray(sig) || (typeof sig === 'string' && sig.includes(','))) {
    throw new ApiError('bad_request', 'headers "X-Session-Id" and "X-Session-Sig" must each be sent exactly once');
  }
  if (typeof user !== 'string' || user === '' || typeof sessionId !== 'string' || sessionId === '' || typeof sig !== 'string' || sig === '') {
    throw new ApiError('unauthorized', 'signed request required: headers X-User, X-Session-Id and X-Session-Sig');
  }
  return { user, sessionId, sig };
}

/** What the replay memory keys on: exactly what was verified (the timestamp in its one canonical form). */
export function replayKey(sessionId: string, tsMs: number, signature: Buffer): string {
  return `${sessionId}\n${tsMs}\n${signature.toString('hex')}`;
}

/** How long a signature stays usable: until its timestamp leaves the window, plus a second of slack. */
export function replayTtlMs(tsMs: number, now: number): number {
  return tsMs + SIGNATURE_WINDOW_MS + 1_000 - now;
}

/** Remembers a verified signature; 401 on a second use, 503 `replay_memory_full` when it cannot be remembered. */
export async function useOnce(replays: ReplayGuard, sessionId: string, tsMs: number, signature: Buffer, now: number): Promise<void> {
  let first: boolean;
  try {
    first = await replays.firstUse(replayKey(sessionId, tsMs, signature), replayTtlMs(tsMs, now));
  } catch (err) {
    if (err instanceof ReplayMemoryFull) {
      throw new ApiError('replay_memory_full', 'too many signed requests in the last minute to remember them all; retry shortly', { retryAfterS: 1 });
    }
    throw err;
  }
  if (!first) throw new ApiError('unauthorized', 'signature already used (replay)');
}

/** Verifies a signed request against the known session keys; returns the proven party. */
export async function verifySignedRequest(
  sessions: SessionKeys,
  replays: ReplayGuard,
  input: { method: string; target: string; body: Buffer | string; headers: SignedHeaders; now?: number },
): Promise<string> {
  const { user, sessionId, sig } = input.headers;
  const parsed = parseSessionSig(sig);
  if (!parsed) throw new ApiError('unauthorized', 'header "X-Session-Sig" must be <tsMs>.<128 hex characters>');
  const now = input.now ?? Date.now();
  if (Math.abs(now - parsed.tsMs) > SIGNATURE_WINDOW_MS) {
    // serverTime lets the client correct its clock and sign again.
    throw new ApiError('unauthorized', 'signature timestamp is outside the ±30 s window (check the client clock)', { serverTime: now });
  }
  const session = await sessions.get(sessionId);
  if (!session) throw new ApiError('unauthorized', 'unknown session');
  if (session.expiresAtMs <= now) throw new ApiError('unauthorized', 'session expired');
  if (session.party !== user) throw new ApiError('unauthorized', 'session does not belong to X-User');
  const payload = signedPayload(input.method, input.target, parsed.tsMs, input.body);
  if (!verifySignature(session.key, payload, parsed.signature)) throw new ApiError('unauthorized', 'invalid signature');
  await useOnce(replays, sessionId, parsed.tsMs, parsed.signature, now);
  return user;
}

/** Adds both guards to every route under PARTY_ROUTE_PREFIX registered after it (an onRoute hook). */
export const authGuards = fp(async (app) => {
  const { config, sessions, replays } = app;

  const authenticate: preHandlerAsyncHookHandler = async (request: FastifyRequest) => {
    const headers = signedHeaders(request);
    request.provenParty = await verifySignedRequest(sessions, replays, {
      method: request.method,
      target: request.url,
      body: request.rawBody ?? '',
      headers,
    });
  };

  const ownParty: preHandlerAsyncHookHandler = async (request: FastifyRequest, _reply: FastifyReply) => {
    const party = (request.params as { party?: string }).party;
    if (request.provenParty !== party) throw new ApiError('forbidden', 'X-User must equal the :party of the path');
  };

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(PARTY_ROUTE_PREFIX)) return;
    if (route.schema && !route.schema.hide) {
      route.schema.security = [{ xUser: [], xSessionId: [], xSessionSig: [] }];
    }
    if (config.authDisabled) return;
    const existing = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [authenticate, ownParty, ...existing];
  });
}, { name: 'auth-guards', fastify: '5.x', dependencies: ['dependencies'] });
