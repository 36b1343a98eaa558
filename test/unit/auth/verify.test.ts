// verifySignedRequest with an explicit clock: exact window edges, check order and replay memory.
// Refusals are seen as the HTTP edge answers them (fromDomainError), as a client gets them.
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { provenParty, signedHeaders, verifySignedRequest, type SignedRequest } from '../../../src/auth/signed-request.js';
import { MemoryReplayGuard } from '../../../src/auth/replay-guard.js';
import { SessionKeys } from '../../../src/auth/session-keys.js';
import { signedPayload } from '../../../src/auth/signature.js';
import { ApiError, fromDomainError } from '../../../src/http/errors.js';
import type { ReplayGuard } from '../../../src/contracts/replay-guard.js';
import { verifiedPartyForBudget } from '../../../src/auth/party-for-budget.js';
import { ReplayMemoryFull } from '../../../src/auth/replay-guard.js';

/** The one verifier as the guard uses it (a refusal thrown), its errors mapped as the HTTP edge maps them. */
const checked = (sessions: SessionKeys, replays: ReplayGuard, input: SignedRequest): Promise<string> =>
  provenParty(sessions, replays, input).catch((err: unknown) => {
    throw fromDomainError(err) ?? err;
  });

const NOW = 1_800_000_000_000;
const PARTY = `alice::${'a'.repeat(64)}`;

function setup() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  const sessions = new SessionKeys(null);
  sessions.add('s1', PARTY, der.subarray(der.length - 32).toString('hex'), NOW + 60_000);
  const replays = new MemoryReplayGuard(1_000, () => NOW);
  const headers = (ts: number, target = '/t', body = '') => ({
    user: PARTY,
    sessionId: 's1',
    sig: `${ts}.${sign(null, signedPayload('GET', target, ts, body), privateKey).toString('hex')}`,
  });
  const verify = (h: ReturnType<typeof headers>, now = NOW, target = '/t', body = '') =>
    checked(sessions, replays, { method: 'GET', target, body, headers: h, now });
  return { sessions, replays, headers, verify };
}

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return `${(err as ApiError).status} ${(err as ApiError).message}`;
  }
}

describe('verifySignedRequest', () => {
  it('accepts exactly ±30 000 ms and refuses ±30 001 ms', async () => {
    const { headers, verify } = setup();
    expect(await reason(verify(headers(NOW - 30_000)))).toBe('accepted');
    expect(await reason(verify(headers(NOW + 30_000)))).toBe('accepted');
    expect(await reason(verify(headers(NOW - 30_001)))).toBe('401 signature timestamp is outside the ±30 s window (check the client clock)');
    expect(await reason(verify(headers(NOW + 30_001)))).toBe('401 signature timestamp is outside the ±30 s window (check the client clock)');
  });

  it('refuses a session at its expiry instant', async () => {
    const { headers, verify } = setup();
    expect(await reason(verify(headers(NOW + 60_000), NOW + 60_000))).toBe('401 session expired');
    expect(await reason(verify(headers(NOW + 59_999), NOW + 59_999))).toBe('accepted');
  });

  it('does not remember a forged signature, so the genuine one still passes afterwards', async () => {
    const { headers, verify } = setup();
    const good = headers(NOW);
    const forged = { ...good, sig: good.sig.replace(/.$/, (c) => (c === '0' ? '1' : '0')) };
    expect(await reason(verify(forged))).toBe('401 invalid signature');
    expect(await reason(verify(good))).toBe('accepted');
    expect(await reason(verify(good))).toBe('401 signature already used (replay)');
  });

  it('covers the body: the same signature over another body fails', async () => {
    const { headers, verify } = setup();
    expect(await reason(verify(headers(NOW, '/t', '{"a":1}'), NOW, '/t', '{"a":2}'))).toBe('401 invalid signature');
  });
});

describe('the verdict', () => {
  it('is a value, not a throw: the party, or the refusal the guard would raise', async () => {
    const { sessions, replays, headers } = setup();
    const input = (h: ReturnType<typeof headers>) => ({ method: 'GET', target: '/t', body: '', headers: h, now: NOW });
    const good = headers(NOW);
    expect(await verifySignedRequest(sessions, replays, input(good))).toEqual({ ok: true, party: PARTY });
    const again = await verifySignedRequest(sessions, replays, input(good));
    expect(again.ok).toBe(false);
    if (!again.ok) expect(fromDomainError(again.refusal)?.body()).toEqual({ error: 'signature already used (replay)', code: 'unauthorized' });
  });
});

describe('replay protection keys on what was verified', () => {
  it('refuses a zero-padded timestamp outright, so padding cannot replay an accepted signature', async () => {
    const { headers, verify } = setup();
    const good = headers(NOW);
    expect(await reason(verify(good))).toBe('accepted');
    const [ts, hex] = good.sig.split('.');
    for (const padded of [`0${ts}`, `00${ts}`, `0000000${ts}`.slice(-16)]) {
      expect(await reason(verify({ ...good, sig: `${padded}.${hex}` }))).toBe('401 header "X-Session-Sig" must be <tsMs>.<128 hex characters>');
    }
    expect(await reason(verify(good))).toBe('401 signature already used (replay)');
  });

  it('carries serverTime in the body of a 401 for a timestamp outside the window', async () => {
    const { headers, verify } = setup();
    const err = await verify(headers(NOW - 30_001)).catch((e: ApiError) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).body()).toMatchObject({ code: 'unauthorized', serverTime: NOW });
  });

  it('answers 503 replay_memory_full rather than forgetting a still-valid signature when the memory is full', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ format: 'der', type: 'spki' });
    const sessions = new SessionKeys(null);
    sessions.add('s1', PARTY, der.subarray(der.length - 32).toString('hex'), NOW + 60_000);
    let now = NOW;
    const replays = new MemoryReplayGuard(2, () => now);
    const h = (ts: number) => ({ user: PARTY, sessionId: 's1', sig: `${ts}.${sign(null, signedPayload('GET', '/t', ts, ''), privateKey).toString('hex')}` });
    const verify = (x: ReturnType<typeof h>) => checked(sessions, replays, { method: 'GET', target: '/t', body: '', headers: x, now });
    const first = h(NOW);
    expect(await reason(verify(first))).toBe('accepted');
    expect(await reason(verify(h(NOW + 1)))).toBe('accepted');
    const full = await verify(h(NOW + 2)).catch((e: ApiError) => e);
    expect((full as ApiError).status).toBe(503);
    expect((full as ApiError).body()).toMatchObject({ code: 'replay_memory_full', retryAfterS: 1 });
    // The first signature is still inside its window: it was not forgotten.
    expect(await reason(verify(first))).toBe('401 signature already used (replay)');
    // Once the remembered signatures have left the window, room is made again.
    now = NOW + 31_002;
    expect(await reason(verify(h(now)))).toBe('accepted');
  });
});

describe('verifiedPartyForBudget (the trading proxy)', () => {
  it('refuses a signed call whose signature cannot be remembered, instead of forwarding it unremembered', async () => {
    const { sessions, headers } = setup();
    const full = new MemoryReplayGuard(1, () => NOW);
    expect(await verifiedPartyForBudget(sessions, full, { method: 'GET', target: '/t', body: '', headers: headers(NOW), now: NOW })).toBe(PARTY);
    await expect(verifiedPartyForBudget(sessions, full, { method: 'GET', target: '/t', body: '', headers: headers(NOW + 1), now: NOW })).rejects.toBeInstanceOf(ReplayMemoryFull);
  });

  it('an unknown session is the engine\'s to judge (null: forwarded, counted under the address)', async () => {
    const { replays, headers } = setup();
    expect(await verifiedPartyForBudget(new SessionKeys(null), replays, { method: 'GET', target: '/t', body: '', headers: headers(NOW), now: NOW })).toBeNull();
  });

  it('a session store that cannot answer gives null; a replay memory that cannot answer is thrown, whatever it throws', async () => {
    const { sessions, replays, headers } = setup();
    const down = { get: async () => Promise.reject(new Error('database down')) } as unknown as SessionKeys;
    expect(await verifiedPartyForBudget(down, replays, { method: 'GET', target: '/t', body: '', headers: headers(NOW), now: NOW })).toBeNull();
    const lost = { firstUse: async () => Promise.reject(new Error('redis down')), spent: async () => Promise.reject(new Error('redis down')) };
    await expect(verifiedPartyForBudget(sessions, lost, { method: 'GET', target: '/t', body: '', headers: headers(NOW), now: NOW })).rejects.toThrow('redis down');
  });
});

describe('signedHeaders', () => {
  const req = (headers: Record<string, string | string[]>) => ({ headers }) as never;
  it('reads the three headers', () => {
    expect(signedHeaders(req({ 'x-user': PARTY, 'x-session-id': 's', 'x-session-sig': 'x' }))).toEqual({ user: PARTY, sessionId: 's', sig: 'x' });
  });
  it('refuses repeated or comma-joined X-User with 400 and empty headers with 401', () => {
    expect(() => signedHeaders(req({ 'x-user': [PARTY, PARTY], 'x-session-id': 's', 'x-session-sig': 'x' }))).toThrow(/duplicated party hint/);
    expect(() => signedHeaders(req({ 'x-user': `${PARTY},b`, 'x-session-id': 's', 'x-session-sig': 'x' }))).toThrow(/duplicated party hint/);
    expect(() => signedHeaders(req({ 'x-user': PARTY, 'x-session-id': '', 'x-session-sig': 'x' }))).toThrow(/signed request required/);
  });
  it('refuses a repeated X-Session-Id or X-Session-Sig with 400 (Node joins repeats with ", ")', () => {
    const raw = (pairs: string[]) => ({ headers: { 'x-user': PARTY, 'x-session-id': 's1, s2', 'x-session-sig': 'x' }, raw: { rawHeaders: pairs } }) as never;
    expect(() => signedHeaders(raw(['X-User', PARTY, 'X-Session-Id', 's1', 'x-session-id', 's2', 'X-Session-Sig', 'x']))).toThrow(/"X-Session-Id" must be sent exactly once/);
    expect(() => signedHeaders(raw(['X-User', PARTY, 'X-Session-Id', 's1', 'X-Session-Sig', 'x', 'X-Session-Sig', 'y']))).toThrow(/"X-Session-Sig" must be sent exactly once/);
    expect(() => signedHeaders(req({ 'x-user': PARTY, 'x-session-id': 's', 'x-session-sig': '1.a, 2.b' }))).toThrow(/exactly once/);
  });
});
