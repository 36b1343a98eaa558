// The authenticate and own-party guards over real HTTP, with session keys from the real
// `sessions` table and from `deps.sessions.add` (what the stream bridge calls per
// `session.authorized` event).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, makeParty, signHex, type KeyPair, type Party } from '../../sandbox/engine/helpers.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGuardApp, type GuardApp } from './guard-app.js';

interface Session {
  id: string;
  party: Party;
  key: KeyPair;
}

let tsCounter = 0;
/** Unique, current timestamps so two signatures of one test never collide as replays. */
function now(): number {
  tsCounter = Math.max(tsCounter + 1, Date.now());
  return tsCounter;
}

function sign(s: Session, method: string, target: string, body = '', o: { ts?: number; user?: string; key?: KeyPair; signedTarget?: string; signedBody?: string; signedMethod?: string } = {}) {
  const ts = o.ts ?? now();
  const message = `${o.signedMethod ?? method}\n${o.signedTarget ?? target}\n${ts}\n${o.signedBody ?? body}`;
  return {
    'x-user': o.user ?? s.party.id,
    'x-session-id': s.id,
    'x-session-sig': `${ts}.${signHex((o.key ?? s.key).privateKey, message)}`,
    ...(body ? { 'content-type': 'application/json' } : {}),
  };
}

async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await fetch(base + path, { method, headers, body: body ?? null });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe('authenticate and own-party guards', () => {
  let db: TestDatabase;
  let gw: GuardApp;
  let alice: Session; // learnt from the sessions table
  let bob: Session; // learnt from deps.sessions.add (the SSE path)
  let expired: Session;

  beforeAll(async () => {
    db = await createTestDatabase();
    gw = await startGuardApp({ DATABASE_URL: db.url });
    alice = { id: 'sess-alice', party: makeParty('alice'), key: generateKeyPair() };
    bob = { id: 'sess-bob', party: makeParty('bob'), key: generateKeyPair() };
    expired = { id: 'sess-old', party: makeParty('carol'), key: generateKeyPair() };
    await db.sql`INSERT INTO sessions (session_id, party, public_key, expires_at, created_seq) VALUES
      (${alice.id}, ${alice.party.id}, ${alice.key.publicKeyHex}, ${new Date(Date.now() + 3_600_000).toISOString()}, 1),
      (${expired.id}, ${expired.party.id}, ${expired.key.publicKeyHex}, ${new Date(Date.now() - 1_000).toISOString()}, 2)`;
    expect(gw.deps.sessions.add(bob.id, bob.party.id, bob.key.publicKeyHex, new Date(Date.now() + 3_600_000).toISOString())).toBe(true);
  });
  afterAll(async () => {
    await gw?.close();
    await db?.drop();
  });

  const ping = (s: Session) => `/v1/users/${s.party.id}/ping`;

  it('accepts a session learnt from the sessions table and records the proven party', async () => {
    const res = await call(gw.url, 'GET', ping(alice), sign(alice, 'GET', ping(alice)));
    expect(res).toEqual({ status: 200, json: { party: alice.party.id, proven: alice.party.id } });
  });

  it('accepts a session learnt from deps.sessions.add (session.authorized)', async () => {
    const res = await call(gw.url, 'GET', ping(bob), sign(bob, 'GET', ping(bob)));
    expect(res).toEqual({ status: 200, json: { party: bob.party.id, proven: bob.party.id } });
  });

  it('accepts a signed query string and a signed body', async () => {
    const target = `${ping(alice)}?limit=5`;
    expect((await call(gw.url, 'GET', target, sign(alice, 'GET', target))).status).toBe(200);
    const echo = `/v1/users/${alice.party.id}/echo`;
    const body = '{"n": 1}';
    const res = await call(gw.url, 'POST', echo, sign(alice, 'POST', echo, body), body);
    expect(res).toEqual({ status: 200, json: { proven: alice.party.id, body: { n: 1 } } });
  });

  it('refuses a forged signature (another key)', async () => {
    const res = await call(gw.url, 'GET', ping(alice), sign(alice, 'GET', ping(alice), '', { key: generateKeyPair() }));
    expect(res).toEqual({ status: 401, json: { error: 'invalid signature', code: 'unauthorized' } });
  });

  it('refuses an expired session', async () => {
    const res = await call(gw.url, 'GET', ping(expired), sign(expired, 'GET', ping(expired)));
    expect(res).toEqual({ status: 401, json: { error: 'session expired', code: 'unauthorized' } });
  });

  it('refuses a replay of an accepted signature', async () => {
    const headers = sign(alice, 'GET', ping(alice));
    expect((await call(gw.url, 'GET', ping(alice), headers)).status).toBe(200);
    const again = await call(gw.url, 'GET', ping(alice), headers);
    expect(again).toEqual({ status: 401, json: { error: 'signature already used (replay)', code: 'unauthorized' } });
  });

  it('refuses a signature replayed elsewhere (another path or method)', async () => {
    const echo = `/v1/users/${alice.party.id}/echo`;
    const forPing = sign(alice, 'GET', ping(alice));
    const res = await call(gw.url, 'POST', echo, forPing);
    expect(res).toEqual({ status: 401, json: { error: 'invalid signature', code: 'unauthorized' } });
    const otherMethod = sign(alice, 'GET', echo, '', { signedMethod: 'GET' });
    expect((await call(gw.url, 'POST', echo, otherMethod)).json.error).toBe('invalid signature');
  });

  it('refuses a session of party A presented with X-User B (401), and A reading B (403)', async () => {
    const wrong = await call(gw.url, 'GET', ping(bob), sign(alice, 'GET', ping(bob), '', { user: bob.party.id }));
    expect(wrong).toEqual({ status: 401, json: { error: 'session does not belong to X-User', code: 'unauthorized' } });
    const other = await call(gw.url, 'GET', ping(bob), sign(alice, 'GET', ping(bob)));
    expect(other).toEqual({ status: 403, json: { error: 'X-User must equal the :party of the path', code: 'forbidden' } });
  });

  it('refuses a tampered path, query or body', async () => {
    const path = await call(gw.url, 'GET', ping(alice), sign(alice, 'GET', ping(alice), '', { signedTarget: `/v1/users/${alice.party.id}/pong` }));
    expect(path.status).toBe(401);
    const q = `${ping(alice)}?limit=2`;
    const query = await call(gw.url, 'GET', q, sign(alice, 'GET', q, '', { signedTarget: `${ping(alice)}?limit=1` }));
    expect(query.json).toEqual({ error: 'invalid signature', code: 'unauthorized' });
    const echo = `/v1/users/${alice.party.id}/echo`;
    const body = await call(gw.url, 'POST', echo, sign(alice, 'POST', echo, '{"n":2}', { signedBody: '{"n":1}' }), '{"n":2}');
    expect(body.json).toEqual({ error: 'invalid signature', code: 'unauthorized' });
  });

  it('refuses a clock skewed by ±31 s and accepts ±29 s', async () => {
    // The 401 carries the server's clock (ms), so the client can correct its own and sign again.
    const window = { error: 'signature timestamp is outside the ±30 s window (check the client clock)', code: 'unauthorized', serverTime: expect.any(Number) };
    for (const skew of [31_000, -31_000]) {
      const before = Date.now();
      const res = await call(gw.url, 'GET', ping(alice), sign(alice, 'GET', ping(alice), '', { ts: Date.now() + skew }));
      expect(res.json).toEqual(window);
      expect(res.json.serverTime).toBeGreaterThanOrEqual(before);
      expect(res.json.serverTime).toBeLessThanOrEqual(Date.now());
    }
    expect((await call(gw.url, 'GET', ping(alice), sign(alice, 'GET', ping(alice), '', { ts: Date.now() + 29_000 }))).status).toBe(200);
    expect((await call(gw.url, 'GET', ping(alice), sign(alice, 'GET', ping(alice), '', { ts: Date.now() - 29_000 }))).status).toBe(200);
  });

  it('refuses an unknown session', async () => {
    const ghost: Session = { id: 'sess-ghost', party: alice.party, key: alice.key };
    const res = await call(gw.url, 'GET', ping(alice), sign(ghost, 'GET', ping(alice)));
    expect(res).toEqual({ status: 401, json: { error: 'unknown session', code: 'unauthorized' } });
  });

  it.each([
    ['no dot', () => 'abc'],
    ['upper-case hex', () => `${Date.now()}.${'A'.repeat(128)}`],
    ['short signature', () => `${Date.now()}.${'a'.repeat(127)}`],
    ['negative timestamp', () => `-1.${'a'.repeat(128)}`],
  ])('refuses a malformed X-Session-Sig (%s)', async (_name, value) => {
    const headers = { ...sign(alice, 'GET', ping(alice)), 'x-session-sig': value() };
    const res = await call(gw.url, 'GET', ping(alice), headers);
    expect(res).toEqual({ status: 401, json: { error: 'header "X-Session-Sig" must be <tsMs>.<128 hex characters>', code: 'unauthorized' } });
  });

  it('refuses missing headers with 401 and a duplicated X-User with 400', async () => {
    const missing = await call(gw.url, 'GET', ping(alice));
    expect(missing).toEqual({ status: 401, json: { error: 'signed request required: headers X-User, X-Session-Id and X-Session-Sig', code: 'unauthorized' } });
    const h = sign(alice, 'GET', ping(alice));
    const dup = await call(gw.url, 'GET', ping(alice), { ...h, 'x-user': `${alice.party.id}, ${alice.party.id}` });
    expect(dup.status).toBe(400);
    expect(dup.json.code).toBe('bad_request');
  });

  it('guards the automatic HEAD route too', async () => {
    const res = await fetch(gw.url + ping(alice), { method: 'HEAD' });
    expect(res.status).toBe(401);
  });

  it('guards the faucet route', async () => {
    const res = await call(gw.url, 'POST', `/v1/users/${alice.party.id}/faucet`);
    // FAUCET_ENABLED is false here: the route answers 404 before the guard, as if it did not exist.
    expect(res).toEqual({ status: 404, json: { error: 'the faucet is not enabled on this gateway (FAUCET_ENABLED)', code: 'not_found' } });
  });
});

describe('guards with AUTH_DISABLED=true', () => {
  it('are no-ops', async () => {
    const gw = await startGuardApp({ AUTH_DISABLED: 'true' });
    try {
      const party = makeParty('dave').id;
      const res = await call(gw.url, 'GET', `/v1/users/${party}/ping`);
      expect(res).toEqual({ status: 200, json: { party, proven: null } });
    } finally {
      await gw.close();
    }
  });
});

describe('guards when the sessions table is unreachable', () => {
  it('answer 503 database_unavailable for an unknown session, never a hang', async () => {
    const gw = await startGuardApp({ DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none', DB_CONNECT_TIMEOUT_S: '1' });
    try {
      const s: Session = { id: 'sess-x', party: makeParty('erin'), key: generateKeyPair() };
      const path = `/v1/users/${s.party.id}/ping`;
      const res = await call(gw.url, 'GET', path, sign(s, 'GET', path));
      expect(res).toEqual({ status: 503, json: { error: 'the indexer database is unavailable; retry shortly', code: 'database_unavailable' } });
    } finally {
      await gw.close();
    }
  });
});
