// With REDIS_URL, two replicas (two gateways in this process, one Redis, a key prefix of their own)
// share the rate limit, the signature replay memory and the faucet cooldown; with Redis unreachable
// each use behaves as documented in docs/fleet.md (replay and faucet 503, rate limit open).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { generateKeyPair, makeParty, signHex, type KeyPair, type Party } from '../../sandbox/engine/helpers.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { closedPort, fleetServices, REDIS_URL, uniqueName } from '../../support/fleet.js';
import { okJson, startFakeEngine, type FakeEngine } from '../trading/fake-engine.js';
import { httpFrom } from '../../support/http-from.js';
import { replayKey } from '../../../src/auth/signed-request.js';
import { parseSessionSig } from '../../../src/auth/signature.js';

const TOKEN = 'fleet-admin-token';
const available = await fleetServices({ redis: true });

interface User {
  party: Party;
  key: KeyPair;
  sessionId: string;
}

function newUser(gws: TestGateway[], hint: string): User {
  const u = { party: makeParty(hint), key: generateKeyPair(), sessionId: `sess-${hint}-${Math.random().toString(36).slice(2)}` };
  for (const gw of gws) gw.deps.sessions.add(u.sessionId, u.party.id, u.key.publicKeyHex, Date.now() + 3_600_000);
  return u;
}

let lastTs = 0;
function signed(u: User, method: string, path: string): Record<string, string> {
  lastTs = Math.max(lastTs + 1, Date.now());
  return { 'x-user': u.party.id, 'x-session-id': u.sessionId, 'x-session-sig': `${lastTs}.${signHex(u.key.privateKey, `${method}\n${path}\n${lastTs}\n`)}` };
}

// Every request also spends its client address's budget (RATE_LIMIT_IP_MAX), so each test below
// calls from a loopback address of its own: one test's calls do not use up another's budget.
async function post(gw: TestGateway, path: string, headers: Record<string, string>, from = '127.0.0.3') {
  const res = await httpFrom(from, gw.url + path, 'POST', headers);
  return { status: res.status, retryAfter: res.headers['retry-after'] ?? null, json: res.json };
}

async function book(gw: TestGateway, from = '127.0.0.2') {
  return (await httpFrom(from, `${gw.url}/v1/orderbook?market=BTC-PERP`, 'GET')).status;
}

describe.skipIf(!available)('shared state in Redis (REDIS_URL)', () => {
  let engine: FakeEngine;
  let a: TestGateway;
  let b: TestGateway;
  const prefix = `${uniqueName('redis')}:`;
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = (req) =>
      req.url === '/v1/admin/faucet' ? okJson({ ok: true, newBalance: '1000.0000000000' }) : okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
    const env = {
      ENGINE_BASE_URL: engine.url,
      ENGINE_ADMIN_TOKEN: TOKEN,
      FAUCET_ENABLED: 'true',
      FAUCET_COOLDOWN_S: '3600',
      RATE_LIMIT_IP_MAX: '4',
      REDIS_URL,
      REDIS_PREFIX: prefix,
    };
    [a, b] = await Promise.all([startGateway(env, { listen: true, overrides: { live: null } }), startGateway(env, { listen: true, overrides: { live: null } })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await engine?.close();
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
  });

  it('a rate limit holds across replicas', async () => {
    const got = [];
    for (let i = 0; i < 6; i++) got.push(await book(i % 2 ? b : a));
    expect(got).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('a signature accepted by one replica is refused by the other', async () => {
    const u = newUser([a, b], 'replay');
    const path = `/v1/users/${u.party.id}/faucet`;
    const headers = signed(u, 'POST', path);
    expect((await post(a, path, headers)).status).toBe(200);
    const again = await post(b, path, headers);
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ error: 'signature already used (replay)', code: 'unauthorized' });
  });

  it('the items of a batch the engine accepted are spent in the shared memory: the other replica finds each used', async () => {
    const u = newUser([a, b], 'batch');
    const items = ['1', '2', '3'].map((price) => {
      const body = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price });
      lastTs = Math.max(lastTs + 1, Date.now());
      return { op: 'place', body, sig: `${lastTs}.${signHex(u.key.privateKey, `POST\n/v1/orders\n${lastTs}\n${body}`)}` };
    });
    const before = engine.requests.length;
    const res = await httpFrom('127.0.0.9', `${a.url}/v1/orders/batch`, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ user: u.party.id, sessionId: u.sessionId, items }));
    expect(res.status).toBe(200);
    expect(res.json.results.map((r: { outcome: string }) => r.outcome)).toEqual(['answered', 'answered', 'answered']);
    expect(engine.requests.length - before).toBe(3);
    // Each signature is remembered for the whole fleet: offered again through the other replica, it is not a first use.
    for (const item of items) {
      const sig = parseSessionSig(item.sig)!;
      expect(await b.deps.replays.firstUse(replayKey(u.sessionId, sig.tsMs, sig.signature), 30_000, sig.tsMs)).toBe(false);
    }
    const unseen = parseSessionSig(`${Date.now()}.${'ab'.repeat(64)}`)!;
    expect(await b.deps.replays.firstUse(replayKey(u.sessionId, unseen.tsMs, unseen.signature), 30_000, unseen.tsMs)).toBe(true);
  });

  it('simultaneous faucet requests to two replicas give one grant', async () => {
    const u = newUser([a, b], 'faucet');
    const path = `/v1/users/${u.party.id}/faucet`;
    engine.requests.length = 0;
    const from = '127.0.0.4';
    const answers = await Promise.all([post(a, path, signed(u, 'POST', path), from), post(b, path, signed(u, 'POST', path), from), post(a, path, signed(u, 'POST', path), from), post(b, path, signed(u, 'POST', path), from)]);
    expect(answers.map((x) => x.status).sort()).toEqual([200, 429, 429, 429]);
    expect(engine.requests.filter((r) => r.url === '/v1/admin/faucet')).toHaveLength(1);
    const refused = answers.find((x) => x.status === 429)!;
    expect(refused.json.code).toBe('rate_limited');
    expect(Number(refused.retryAfter)).toBeGreaterThan(3500);
  });

  it('an engine refusal gives the cooldown key back', async () => {
    const u = newUser([a, b], 'refused');
    const path = `/v1/users/${u.party.id}/faucet`;
    engine.respond = () => okJson({ ok: false, code: 'faucet_disabled', error: 'no' });
    expect((await post(a, path, signed(u, 'POST', path), '127.0.0.5')).json).toEqual({ ok: false, code: 'faucet_disabled', error: 'no' });
    engine.respond = () => okJson({ ok: true, newBalance: '1000.0000000000' });
    expect((await post(b, path, signed(u, 'POST', path), '127.0.0.5')).status).toBe(200);
  });

  it('/readyz and /metrics say Redis answers', async () => {
    const ready = (await (await fetch(`${a.url}/readyz`)).json()) as any;
    expect(ready.redis).toEqual({ configured: true, reachable: true });
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(metrics).toMatch(/^bff_redis_up 1$/m);
  });
});

describe.skipIf(!available)('Redis unreachable', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
    gw = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: TOKEN, FAUCET_ENABLED: 'true', RATE_LIMIT_IP_MAX: '2', REDIS_URL: `redis://127.0.0.1:${await closedPort()}` },
      { listen: true, overrides: { live: null } },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('rate limits fail open: requests past the limit go through, counted', async () => {
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await book(gw));
    expect(got).toEqual([200, 200, 200, 200]);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^bff_redis_failures_total\{use="rate_limit",outcome="fail_open"\} [4-9]$/m);
    expect(metrics).toMatch(/^bff_redis_up 0$/m);
  });

  it('signed requests fail closed (503 shared_state_unavailable), so is the faucet', async () => {
    const u = newUser([gw], 'down');
    const path = `/v1/users/${u.party.id}/faucet`;
    const res = await post(gw, path, signed(u, 'POST', path));
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ error: 'the signature replay memory (Redis) is unavailable; retry shortly', code: 'shared_state_unavailable' });
    expect(engine.requests.filter((r) => r.url === '/v1/admin/faucet')).toHaveLength(0);
  });

  it('every signed trading call fails closed too: 503 with its code, and the engine never sees it', async () => {
    const u = newUser([gw], 'proxy-down');
    const engineCalls = () => engine.requests.filter((r) => r.url !== '/v1/orderbook?depth=20&market=BTC-PERP').length;
    const before = engineCalls();
    const body = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', price: '1', size: '1' });
    const calls: Array<{ method: string; path: string; body?: string }> = [
      { method: 'POST', path: '/v1/orders', body },
      { method: 'DELETE', path: '/v1/orders/o-1' },
      { method: 'POST', path: '/v1/tpsl', body: JSON.stringify({ market: 'BTC-PERP', tp: null, sl: null }) },
    ];
    for (const c of calls) {
      lastTs = Math.max(lastTs + 1, Date.now());
      const sig = `${lastTs}.${signHex(u.key.privateKey, `${c.method}\n${c.path}\n${lastTs}\n${c.body ?? ''}`)}`;
      const headers: Record<string, string> = { 'x-user': u.party.id, 'x-session-id': u.sessionId, 'x-session-sig': sig };
      if (c.body) headers['content-type'] = 'application/json';
      const res = await httpFrom('127.0.0.5', gw.url + c.path, c.method, headers, c.body);
      expect({ call: `${c.method} ${c.path}`, status: res.status, json: res.json }).toEqual({
        call: `${c.method} ${c.path}`,
        status: 503,
        json: { error: 'the signature replay memory (Redis) is unavailable; retry shortly', code: 'shared_state_unavailable' },
      });
    }
    expect(engineCalls()).toBe(before);
  });

  it('the faucet lock fails closed too (auth disabled, so the replay memory is not asked)', async () => {
    const open = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: TOKEN, FAUCET_ENABLED: 'true', AUTH_DISABLED: 'true', REDIS_URL: `redis://127.0.0.1:${await closedPort()}` },
      { listen: true, overrides: { live: null } },
    );
    try {
      const res = await post(open, `/v1/users/${makeParty('nolock').id}/faucet`, {});
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: 'the faucet cooldown store (Redis) is unavailable; retry shortly', code: 'shared_state_unavailable' });
      expect(engine.requests.filter((r) => r.url === '/v1/admin/faucet')).toHaveLength(0);
    } finally {
      await open.close();
    }
  });

  it('/readyz is degraded and names Redis', async () => {
    const res = await fetch(`${gw.url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as any;
    expect(body.redis).toMatchObject({ configured: true, reachable: false });
    expect(body.reasons).toContain('redis unreachable: signed requests and the faucet refused (503), rate limits open');
  });
});
