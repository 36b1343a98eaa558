// The authenticate and own-party guards of every `/v1/users/:party/...` route (spec §5).
// They are attached by an onRoute hook, so a route plugin only has to live under that prefix.
// With AUTH_DISABLED=true both are no-ops.
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppDeps } from '../app.js';
import { ApiError } from '../http/errors.js';
import { parseSessionSig, signedPayload, SIGNATURE_WINDOW_MS, verifySignature } from './signature.js';
import { SessionKeys } from './session-keys.js';
import { ReplayCache, type ReplayGuard } from './replay-cache.js';

export { SessionKeys };

export const PARTY_ROUTE_PREFIX = '/v1/users/:party';

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw request body as received (signatures cover these bytes). */
    rawBody?: Buffer;
    /** The party whose signature this request carried, once the authenticate guard passed. */
    provenParty?: string;
  }
}

export interface SignedHeaders {
  user: string;
  sessionId: string;
  sig: string;
}

/** Reads the three signing headers; throws 400 for a duplicated X-User, 401 when one is missing. */
export function signedHeaders(request: FastifyRequest): SignedHeaders {
  const h = request.headers;
  const user = h['x-user'];
  if (Array.isArray(user) || (typeof user === 'string' && user.includes(','))) {
    throw new ApiError('bad_request', 'header "X-User" must be sent exactly once with one party (duplicated party hint)');
  }
  const sessionId = h['x-session-id'];
  const sig = h['x-session-sig'];
  if (typeof user !== 'string' || user === '' || typeof sessionId !== 'string' || sessionId === '' || typeof sig !== 'string' || sig === '') {
    throw new ApiError('unauthorized', 'signed request required: headers X-User, X-Session-Id and X-Session-Sig');
  }
  return { user, sessionId, sig };
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
    throw new ApiError('unauthorized', 'signature timestamp is outside the ±30 s window (check the client clock)');
  }
  const session = await sessions.get(sessionId);
  if (!session) throw new ApiError('unauthorized', 'unknown session');
  if (session.expiresAtMs <= now) throw new ApiError('unauthorized', 'session expired');
  if (session.party !== user) throw new ApiError('unauthorized', 'session does not belong to X-User');
  const payload = signedPayload(input.method, input.target, parsed.tsMs, input.body);
  if (!verifySignature(session.key, payload, parsed.signature)) throw new ApiError('unauthorized', 'invalid signature');
  // Remembered until the timestamp leaves the window (plus a second for clock skew between replicas).
  const ttlMs = parsed.tsMs + SIGNATURE_WINDOW_MS - now + 1_000;
  if (!(await replays.firstUse(`${sessionId}|${sig}`, ttlMs))) throw new ApiError('unauthorized', 'signature already used (replay)');
  return user;
}

export function installAuthGuards(app: FastifyInstance<any, any, any, any, any>, deps: Pick<AppDeps, 'config' | 'sessions'> & { replays?: ReplayGuard }): void {
  if (deps.config.authDisabled) return;
  const replays = deps.replays ?? new ReplayCache(SIGNATURE_WINDOW_MS * 2);

  const authenticate: preHandlerAsyncHookHandler = async (request: FastifyRequest) => {
    const headers = signedHeaders(request);
    request.provenParty = await verifySignedRequest(deps.sessions, replays, {
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
    const existing = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [authenticate, ownParty, ...existing];
    if (route.schema && !route.schema.hide) {
      route.schema.security = [{ xUser: [], xSessionId: [], xSessionSig: [] }];
    }
  });
}
