// CORS for the signing headers and the per-party/IP rate limit of the trading routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync, sign } from 'node:crypto';
import { request } from 'undici';
import { httpFrom } from '../../support/http-from.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

async function call(url: string, method: string, headers: Record<string, string> = {}) {
  const res = await request(url, { method: method as 'GET', headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

describe('CORS with CORS_ORIGINS', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = () => ({ status: 502, body: '<html>bad gateway</html>' });
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, CORS_ORIGINS: 'https://app.example, http://localhost:3000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  it('answers a preflight for the three signing headers from an allowed origin', async () => {
    const res = await call(`${gw.url}/v1/orders`, 'OPTIONS', {
      origin: 'https://app.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-user,x-session-id,x-session-sig',
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    const allowed = String(res.headers['access-control-allow-headers']).split(',').map((h) => h.trim());
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'x-user', 'x-session-id', 'x-session-sig']));
    expect(String(res.headers['access-control-allow-methods'])).toContain('DELETE');
    expect(engine.requests).toHaveLength(0);
  });

  it('gives no allow-origin to an origin not in the list', async () => {
    const res = await call(`${gw.url}/v1/orders`, 'OPTIONS', {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-user',
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('puts CORS headers on the JSON 502 that replaces an engine HTML page, and exposes Retry-After', async () => {
    const res = await call(`${gw.url}/v1/orderbook`, 'GET', { origin: 'http://localhost:3000' });
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: 'the engine answered HTTP 502 with a non-JSON body', code: 'engine_unavailable', engineStatus: 502 });
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:3000');
    expect(String(res.headers['access-control-expose-headers'])).toContain('retry-after');
  });
});

describe('rate limit of the trading routes', () => {
  // Party budget 3, IP budget 6 per minute. Requests come from distinct loopback addresses
  // (127.0.0.x), so "another client IP" is real here.
  let gw: TestGateway;
  let engine: FakeEngine;
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = (req) =>
      req.url.startsWith('/v1/orderbook')
        ? okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] })
        : okJson({ ok: true, orderId: 'o-1', status: 'open', filledSize: '0.0000000000', avgPrice: null });
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '3', RATE_LIMIT_IP_MAX: '6', RATE_LIMIT_WINDOW_MS: '60000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  /** A client on its own loopback address (node:http: undici's Agent does not bind localAddress). */
  const from = (address: string) => (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    httpFrom(address, `${gw.url}${path}`, method, headers, body);

  let tsCounter = 0;
  const session = (hint: string) => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ format: 'der', type: 'spki' });
    const hex = der.subarray(der.length - 32).toString('hex');
    const id = `sess-${hint}-${hex.slice(0, 8)}`;
    const party = `${hint}::${hex}`;
    gw.deps.sessions.add(id, party, hex, Date.now() + 600_000);
    /** Correctly signed headers for one request (a fresh timestamp each time). */
    const signed = (method: string, target: string, body = '') => {
      tsCounter = Math.max(tsCounter + 1, Date.now());
      const sig = sign(null, Buffer.from(`${method}\n${target}\n${tsCounter}\n${body}`), privateKey).toString('hex');
      return { 'x-user': party, 'x-session-id': id, 'x-session-sig': `${tsCounter}.${sig}`, ...(body ? { 'content-type': 'application/json' } : {}) };
    };
    return { id, party, signed };
  };
  const ORDER = '{"market":"BTC-PERP","side":"buy","type":"limit","size":"1","price":"100"}';

  it('never lets unverified headers spend a party budget: copying a public session id cannot lock its party out', async () => {
    const victim = session('victim');
    const attacker = from('127.0.0.2');
    // Unsigned book reads carrying the victim's public X-User and X-Session-Id count under the attacker's IP.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await attacker('GET', '/v1/orderbook', { 'x-user': victim.party, 'x-session-id': victim.id })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
    // Garbage signatures do not spend it either.
    await attacker('POST', '/v1/orders', { 'x-user': victim.party, 'x-session-id': victim.id, 'x-session-sig': `${Date.now()}.${'0'.repeat(128)}`, 'content-type': 'application/json' }, ORDER);
    // The victim, from its own address, still has its whole party budget (3 verified requests).
    const victimClient = from('127.0.0.3');
    for (let i = 0; i < 3; i++) expect((await victimClient('POST', '/v1/orders', victim.signed('POST', '/v1/orders', ORDER), ORDER)).status).toBe(200);
    const limited = await victimClient('POST', '/v1/orders', { ...victim.signed('POST', '/v1/orders', ORDER), origin: 'https://app.example' }, ORDER);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'rate limit of 3 requests per 60000 ms per party exceeded; retry in 60 s', code: 'rate_limited', retryAfterS: 60 });
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.headers['access-control-allow-origin']).toBe('*');
  });

  it('a replayed signature spends no party budget', async () => {
    const alice = session('alice');
    const headers = alice.signed('POST', '/v1/orders', ORDER);
    const client = from('127.0.0.4');
    // One use spends one unit; replays of it (the gateway refuses them itself, 401: docs/trading.md
    // "Spent signatures") spend only the IP budget.
    expect((await client('POST', '/v1/orders', headers, ORDER)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await client('POST', '/v1/orders', headers, ORDER)).status).toBe(401);
    const other = from('127.0.0.5');
    expect((await other('POST', '/v1/orders', alice.signed('POST', '/v1/orders', ORDER), ORDER)).status).toBe(200);
    expect((await other('POST', '/v1/orders', alice.signed('POST', '/v1/orders', ORDER), ORDER)).status).toBe(200);
    expect((await other('POST', '/v1/orders', alice.signed('POST', '/v1/orders', ORDER), ORDER)).status).toBe(429);
  });

  it('one IP cannot multiply its budget by minting sessions: every request also counts under the IP', async () => {
    const client = from('127.0.0.6');
    const parties = [session('p1'), session('p2'), session('p3')];
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const p of parties) statuses.push((await client('POST', '/v1/orders', p.signed('POST', '/v1/orders', ORDER), ORDER)).status);
    }
    // 3 parties × 3 would be 9; the IP budget stops the IP at 6.
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(statuses.slice(6)).toEqual([429, 429, 429]);
    const limited = await client('GET', '/v1/orderbook');
    expect(limited.json).toMatchObject({ code: 'rate_limited', retryAfterS: expect.any(Number) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('does not limit routes outside the trading plugin', async () => {
    const client = from('127.0.0.6');
    for (let i = 0; i < 8; i++) expect((await client('GET', '/healthz')).status).toBe(200);
  });
});
