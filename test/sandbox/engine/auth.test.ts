import { expectCanonicalEvents } from './canonical-events.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/server.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { fundedClient, generateKeyPair, http, makeParty, SigningClient } from './helpers.js';

let eng: RunningEngine;
// Engine time = real time plus an offset a test moves (to expire a session without waiting).
let offset = 0;
let alice: SigningClient;
let bob: SigningClient;
const order = { market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.01', price: '1000' };

const file = fileScope();
beforeAll(async () => {
  eng = await testEngine(file, { now: () => Date.now() + offset });
  [alice, bob] = await Promise.all([fundedClient(eng.url, eng.adminToken, '1000', 'alice'), fundedClient(eng.url, eng.adminToken, '1000', 'bob')]);
});

const expect401 = (r: { status: number; body: any }): void => {
  expect(r.status).toBe(401);
  expect(r.body).toEqual({ ok: false, code: 'unauthorized', error: expect.any(String) });
};

describe('session-auth', () => {
  it('authorizes a session and emits session.authorized', async () => {
    const c = new SigningClient(eng.url, makeParty('sess'));
    const before = eng.engine.log.maxSeq;
    const r = await c.authorize(10 * 60 * 1000);
    expect(r.body).toEqual({ ok: true, sessionId: expect.any(String), expiresAt: expect.any(Number) });
    const ev = eng.engine.log.eventsSince(before);
    expect(ev).toEqual([
      expect.objectContaining({ kind: 'session.authorized', party: c.id, payload: { sessionId: r.body.sessionId, sessionPublicKey: c.session.publicKeyHex, expiresAt: new Date(r.body.expiresAt).toISOString() } }),
    ]);
  });

  it('rejects a bad party signature, a past expiry, a lifetime over 24 h and malformed bodies', async () => {
    const p = makeParty('x');
    const s = generateKeyPair();
    const other = generateKeyPair();
    const forged = await http(eng.url, 'POST', '/v1/session-auth', { body: SigningClient.sessionAuthBody(p, s, Date.now() + 60_000, other.privateKey) });
    expect(forged.status).toBe(200);
    expect(forged.body).toEqual({ ok: false, code: 'invalid_signature', error: expect.any(String) });
    const past = await http(eng.url, 'POST', '/v1/session-auth', { body: SigningClient.sessionAuthBody(p, s, Date.now() - 1000) });
    expect(past.body).toEqual({ ok: false, code: 'session_expired', error: expect.any(String) });
    const long = await http(eng.url, 'POST', '/v1/session-auth', { body: SigningClient.sessionAuthBody(p, s, Date.now() + 25 * 3600_000) });
    expect(long.status).toBe(400);
    expect((await http(eng.url, 'POST', '/v1/session-auth', { body: '{' })).status).toBe(400);
    const missing = await http(eng.url, 'POST', '/v1/session-auth', { body: JSON.stringify({ party: p.id }) });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('bad_request');
  });
});

describe('signed requests', () => {
  it('accepts a valid signature, including a GET with a signed JSON body', async () => {
    expect((await alice.placeOrder(order)).body).toMatchObject({ ok: true, status: 'open' });
    const me = await alice.me();
    expect(me.body).toMatchObject({ ok: true, party: alice.id, balance: '1000.0000000000' });
    expect(me.body.openOrders).toHaveLength(1);
  });

  it('rejects forged, tampered, skewed, replayed, foreign and unknown-session requests with 401', async () => {
    expect401(await alice.signed('POST', '/v1/orders', order, { key: generateKeyPair().privateKey })); // forged
    expect401(await alice.signed('POST', '/v1/orders', order, { signedBody: JSON.stringify({ ...order, size: '0.02' }) })); // tampered body
    expect401(await alice.signed('GET', '/v1/user/me', { party: alice.id }, { signedBody: '' })); // GET body not covered
    expect401(await alice.signed('POST', '/v1/orders', order, { ts: Date.now() - 31_000 })); // skewed clock
    expect401(await alice.signed('POST', '/v1/orders', order, { ts: Date.now() + 31_000 }));
    expect((await alice.signed('POST', '/v1/orders', order, { ts: Date.now() - 25_000 })).body.ok).toBe(true); // inside the window
    expect401(await alice.signed('POST', '/v1/orders', order, { user: bob.id })); // session of another party
    expect401(await alice.signed('POST', '/v1/orders', order, { sessionId: 's-unknown' })); // unknown session
    expect401(await http(eng.url, 'POST', '/v1/orders', { body: JSON.stringify(order), headers: { 'content-type': 'application/json' } })); // no headers
    const body = JSON.stringify(order);
    const h = alice.signHeaders('POST', '/v1/orders', body);
    expect((await http(eng.url, 'POST', '/v1/orders', { body, headers: h })).body.ok).toBe(true);
    expect401(await http(eng.url, 'POST', '/v1/orders', { body, headers: h })); // replay
    const sigPathOnly = alice.signHeaders('DELETE', '/v1/orders/o-1', '');
    expect401(await http(eng.url, 'DELETE', '/v1/orders/o-2', { headers: sigPathOnly })); // path not as signed
    expect401(await alice.signed('GET', '/v1/user/me', { party: alice.id }, { ts: Number.NaN }));
  });

  it('answers session_expired (HTTP 200) once the session has expired', async () => {
    const c = new SigningClient(eng.url, makeParty('short'));
    await c.authorize(400);
    offset += 500; // the session's 400 ms are over in engine time
    const before = eng.engine.log.maxSeq;
    const r = await c.placeOrder({ ...order, clientOrderId: 'late' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: false, code: 'session_expired', error: expect.any(String) });
    expect(eng.engine.log.eventsSince(before)).toEqual([
      expect.objectContaining({ kind: 'engine.order_rejected', market: 'ETH-PERP', party: c.id, payload: { clientOrderId: 'late', code: 'session_expired', error: 'session expired' } }),
    ]);
    expect((await c.me()).body.code).toBe('session_expired');
  });

  it('answers a duplicated X-User with HTTP 502 and an HTML body', async () => {
    const h = alice.signHeaders('POST', '/v1/orders', JSON.stringify(order));
    const flat = Object.entries(h).flat();
    const dup = await http(eng.url, 'POST', '/v1/orders', { body: JSON.stringify(order), headers: [...flat, 'x-user', alice.id] });
    expect(dup.status).toBe(502);
    expect(String(dup.headers['content-type'])).toMatch(/^text\/html/);
    expect(dup.text).toContain('<html>');
    const comma = await http(eng.url, 'GET', '/healthz', { headers: { 'x-user': `${alice.id},${bob.id}` } });
    expect(comma.status).toBe(502);
    expect(String(comma.headers['content-type'])).toMatch(/^text\/html/);
  });

  it('GET /v1/user/me requires the body party to be X-User', async () => {
    const r = await alice.signed('GET', '/v1/user/me', { party: bob.id });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('bad_request');
  });
});

describe('rate limit', () => {
  it('answers 429 rate_limited past the per-party budget', async (ctx) => {
    const rl = await testEngine(ctx, { rateLimitPerSec: 3 });
    const c = await fundedClient(rl.url, rl.adminToken);
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await c.me()).status);
    expect(codes.slice(0, 3)).toEqual([200, 200, 200]);
    expect(codes.at(-1)).toBe(429);
  });
});

describe('event encoding', () => {
  it('builds every event with sorted keys, so its JSON is already canonical', () => {
    expectCanonicalEvents(eng.engine.log.eventsSince(0));
  });
});
