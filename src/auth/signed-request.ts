// The one check of a signed request (docs/trading.md "Signing"): the three signing headers, the
// ±30 s window, the session key, the ed25519 signature over the request, and first use. The
// authenticate guard, the trading proxy's party budget and the stream's party proof all ask it.
import type { IncomingHttpHeaders } from 'node:http';
import type { ReplayEntry, ReplayGuard } from '../contracts/replay-guard.js';
import { systemClock } from '../contracts/clock.js';
import { AuthError } from './errors.js';
import type { SessionKeys } from './session-keys.js';
import { parseSessionSig, signedPayload, SIGNATURE_WINDOW_MS, verifySignature, verifySignatureOffThread } from './signature.js';

export interface SignedHeaders {
  user: string;
  sessionId: string;
  sig: string;
}

/** What `signedHeaders` reads of a request (a Fastify request, or a bare IncomingMessage). */
export interface HeaderSource {
  headers: IncomingHttpHeaders;
  raw?: { rawHeaders?: string[] };
}

const SIGNING_HEADERS = ['x-user', 'x-session-id', 'x-session-sig'] as const;
const DISPLAY: Record<string, string> = { 'x-user': 'X-User', 'x-session-id': 'X-Session-Id', 'x-session-sig': 'X-Session-Sig' };

/** How many times each signing header was sent (Node joins repeated unknown headers with ", "). */
function repeatedSigningHeader(request: HeaderSource): string | null {
  const raw = request.raw?.rawHeaders;
  if (!raw) return null;
  const counts = new Map<string, number>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if ((SIGNING_HEADERS as readonly string[]).includes(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  for (const [name, n] of counts) if (n > 1) return name;
  return null;
}

/**
 * Reads the three signing headers; throws AuthError `malformed` when one is sent more than once
 * (or, for X-User and X-Session-Sig, holds a comma: a joined duplicate), `unauthenticated` when
 * one is missing.
 */
export function signedHeaders(request: HeaderSource): SignedHeaders {
  const h = request.headers;
  const user = h['x-user'];
  if (Array.isArray(user) || (typeof user === 'string' && user.includes(','))) {
    throw new AuthError('malformed', 'header "X-User" must be sent exactly once with one party (duplicated party hint)');
  }
  const repeated = repeatedSigningHeader(request);
  if (repeated) throw new AuthError('malformed', `header "${DISPLAY[repeated]}" must be sent exactly once`);
  const sessionId = h['x-session-id'];
  const sig = h['x-session-sig'];
  if (Array.isArray(sessionId) || Array.isArray(sig) || (typeof sig === 'string' && sig.includes(','))) {
    throw new AuthError('malformed', 'headers "X-Session-Id" and "X-Session-Sig" must each be sent exactly once');
  }
  if (typeof user !== 'string' || user === '' || typeof sessionId !== 'string' || sessionId === '' || typeof sig !== 'string' || sig === '') {
    throw new AuthError('unauthenticated', 'signed request required: headers X-User, X-Session-Id and X-Session-Sig');
  }
  return { user, sessionId, sig };
}

/** What the replay memory keys on: exactly what was verified (the timestamp in its one canonical form). */
export function replayKey(sessionId: string, tsMs: number, signature: Buffer): string {
  return `${sessionId}\n${tsMs}\n${signature.toString('hex')}`;
}

/** How long a signature stays usable: until its timestamp leaves the window, plus a second of slack. */
export function replayTtlMs(tsMs: number, now: number, windowMs = SIGNATURE_WINDOW_MS): number {
  return tsMs + windowMs + 1_000 - now;
}

/**
 * Why a signed request proves nothing. Every reason but `unknown_session` is certain: the engine
 * refuses such a call too (a session the gateway has not learnt yet may be the engine's).
 */
export type RefusalReason = 'syntax' | 'window' | 'unknown_session' | 'expired' | 'other_party' | 'invalid' | 'replayed';

/** The verdict on a signed request: the proven party, or why it proves nothing. */
export type SignatureVerdict = { ok: true; party: string } | { ok: false; refusal: AuthError; reason: RefusalReason };

/**
 * Which refusals the gateway makes itself instead of forwarding the call for the engine to judge:
 * `spent`: a signature its replay memory holds (the engine may never have seen it: a skipped batch
 * item, a replace's unsent place), on every path; `certain`: any refusal the engine would make as
 * well (a cancel-replace judges its place so before sending its cancel).
 */
export type RefuseWhen = 'spent' | 'certain';

/** The refusal the gateway answers itself for this verdict, or null (proven, or the engine's to judge). */
export function gatewayRefusal(verdict: SignatureVerdict, when: RefuseWhen): AuthError | null {
  if (verdict.ok) return null;
  if (verdict.reason === 'replayed') return verdict.refusal;
  return when === 'certain' && verdict.reason !== 'unknown_session' ? verdict.refusal : null;
}

export interface SignedRequest {
  method: string;
  target: string;
  body: Buffer | string;
  headers: SignedHeaders;
  now?: number;
  /** Check the ed25519 signature on the thread pool (signature.ts verifySignatureOffThread). */
  offThread?: boolean;
  /**
   * Called before the session is looked up in the database (it is not held in memory): the
   * caller's budget of such lookups (a throw refuses the request; docs/security.md).
   */
  beforeLookup?: () => Promise<void>;
}

const refuse = (reason: RefusalReason, message: string, details?: Record<string, unknown>): SignatureVerdict => ({
  ok: false,
  refusal: new AuthError('unauthenticated', message, details),
  reason,
});

/**
 * Verifies a signed request against the known session keys, in this order: signature syntax,
 * time window, session (known, unexpired, of X-User), signature, first use (a verified signature
 * is remembered, so it proves nothing a second time). A refusal is a verdict, not a throw; what
 * throws is a store that cannot answer: the session lookup (DatabaseUnavailableError), the replay
 * memory (ReplayMemoryFull, SharedStateUnavailableError).
 */
export async function verifySignedRequest(sessions: SessionKeys, replays: ReplayGuard, input: SignedRequest): Promise<SignatureVerdict> {
  const { user, sessionId, sig } = input.headers;
  const parsed = parseSessionSig(sig);
  if (!parsed) return refuse('syntax', 'header "X-Session-Sig" must be <tsMs>.<128 hex characters>');
  const now = input.now ?? systemClock.now();
  // serverTime lets the client correct its clock and sign again.
  const windowMs = replays.windowMs ?? SIGNATURE_WINDOW_MS;
  if (Math.abs(now - parsed.tsMs) > windowMs) return refuse('window', `signature timestamp is outside the ±${windowMs / 1_000} s window (check the client clock)`, { serverTime: now });
  const session = await sessions.get(sessionId, input.beforeLookup);
  if (!session) return refuse('unknown_session', 'unknown session');
  if (session.expiresAtMs <= now) return refuse('expired', 'session expired');
  if (session.party !== user) return refuse('other_party', 'session does not belong to X-User');
  const payload = signedPayload(input.method, input.target, parsed.tsMs, input.body);
  const valid = input.offThread ? await verifySignatureOffThread(session.key, payload, parsed.signature) : verifySignature(session.key, payload, parsed.signature);
  if (!valid) return refuse('invalid', 'invalid signature');
  const first = await replays.firstUse(replayKey(sessionId, parsed.tsMs, parsed.signature), replayTtlMs(parsed.tsMs, now, windowMs), parsed.tsMs);
  if (!first) return { ok: false, refusal: spentRefusal(), reason: 'replayed' };
  return { ok: true, party: user };
}

/**
 * Spends signatures the engine has just accepted (a batch's items it answered 2xx: it verified the
 * same bytes with the same session key, within its own window), without checking them again here:
 * the replay memory then holds them as if the gateway had verified them. All in one exchange with
 * the memory when it can (`firstUseMany`). One answer per signature, in order: false when it was
 * already remembered or its syntax is not the canonical one (nothing to remember: such a signature
 * never passes `verifySignedRequest`). Throws as `firstUse` does when the memory cannot remember
 * them. A signature from before a lost memory is refused like any other (the engine's 2xx does not
 * know of the loss).
 */
export async function spendEngineVerifiedMany(replays: ReplayGuard, signatures: readonly SignedHeaders[], now = systemClock.now()): Promise<boolean[]> {
  return spendReplayEntries(replays, replayEntries(replays, signatures, now));
}

/**
 * The replay memory's entries of signatures (null for one whose syntax is not the canonical one),
 * made before they are spent: a batch makes them while the engine works on its items, so that
 * once the last answer is in only the exchange with the memory is left (docs/adr/0188). Made
 * earlier, an entry's time to live is counted from then, so it is remembered a little longer,
 * never less.
 */
export function replayEntries(replays: ReplayGuard, signatures: readonly SignedHeaders[], now = systemClock.now()): (ReplayEntry | null)[] {
  const windowMs = replays.windowMs ?? SIGNATURE_WINDOW_MS;
  return signatures.map((headers) => {
    const parsed = parseSessionSig(headers.sig);
    return parsed ? { key: replayKey(headers.sessionId, parsed.tsMs, parsed.signature), ttlMs: replayTtlMs(parsed.tsMs, now, windowMs), signedAtMs: parsed.tsMs } : null;
  });
}

/**
 * Which of these signatures the replay memory holds as spent (one exchange): a call carrying one is
 * refused by the gateway itself (`gatewayRefusal`), whether or not the engine ever saw it. A
 * signature whose syntax is not the canonical one is not spent (false).
 */
export async function spentSignatures(replays: ReplayGuard, signatures: readonly SignedHeaders[]): Promise<boolean[]> {
  const keys: string[] = [];
  const at: number[] = [];
  signatures.forEach((headers, i) => {
    const parsed = parseSessionSig(headers.sig);
    if (!parsed) return;
    keys.push(replayKey(headers.sessionId, parsed.tsMs, parsed.signature));
    at.push(i);
  });
  const out = signatures.map(() => false);
  if (keys.length === 0) return out;
  const spent = await replays.spent(keys);
  at.forEach((i, j) => (out[i] = spent[j]!));
  return out;
}

/** The refusal of a call whose signature the replay memory holds (as `verifySignedRequest` words it). */
export function spentRefusal(): AuthError {
  return new AuthError('unauthenticated', 'signature already used (replay)');
}

/** `spendEngineVerifiedMany` of entries made by `replayEntries`: one answer per entry (false for null). */
export async function spendReplayEntries(replays: ReplayGuard, made: readonly (ReplayEntry | null)[]): Promise<boolean[]> {
  const entries: ReplayEntry[] = [];
  const at: number[] = [];
  made.forEach((entry, i) => {
    if (entry === null) return;
    entries.push(entry);
    at.push(i);
  });
  const firsts = replays.firstUseMany ? await replays.firstUseMany(entries) : await Promise.all(entries.map((e) => replays.firstUse(e.key, e.ttlMs, e.signedAtMs)));
  const out = made.map(() => false);
  at.forEach((i, j) => (out[i] = firsts[j]!));
  return out;
}

/** `verifySignedRequest` for a caller that needs the party: throws the refusal. */
export async function provenParty(sessions: SessionKeys, replays: ReplayGuard, input: SignedRequest): Promise<string> {
  const verdict = await verifySignedRequest(sessions, replays, input);
  if (!verdict.ok) throw verdict.refusal;
  return verdict.party;
}
