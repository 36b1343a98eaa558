// CORS for the signing headers and the per-party/IP rate limit of the trading routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const party = (c: string) => `${c}::${c.repeat(64).slice(0, 64)}`;

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
  let gw: TestGateway;
  let engine: FakeEngine;
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  const KEY = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';
  const known = (c: string) => {
    gw.deps.sessions.add(`sess-${c}`, party(c), KEY, Date.now() + 60_000);
    return { 'x-user': party(c), 'x-session-id': `sess-${c}` };
  };

  it('answers 429 rate_limited with Retry-After and retryAfterS past RATE_LIMIT_MAX, per party with a known session', async () => {
    const alice = known('a');
    for (let i = 0; i < 3; i++) expect((await call(`${gw.url}/v1/orderbook`, 'GET', alice)).status).toBe(200);
    const limited = await call(`${gw.url}/v1/orderbook`, 'GET', { ...alice, origin: 'https://app.example' });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'rate limit of 3 requests per 60000 ms exceeded; retry in 1 minute', code: 'rate_limited', retryAfterS: 60 });
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.headers['access-control-allow-origin']).toBe('*');
    expect(engine.requests).toHaveLength(3);
    // Another party has its own budget; so do requests without X-User (keyed by IP).
    expect((await call(`${gw.url}/v1/orderbook`, 'GET', known('b'))).status).toBe(200);
    expect((await call(`${gw.url}/v1/orderbook`, 'GET')).status).toBe(200);
  });

  it('counts made-up parties (no known session) under the client IP, so rotating X-User does not escape it', async () => {
    // The IP budget (3) has one request spent above; two more pass, the third is refused.
    expect((await call(`${gw.url}/v1/orderbook`, 'GET', { 'x-user': party('c'), 'x-session-id': 'made-up' })).status).toBe(200);
    expect((await call(`${gw.url}/v1/orderbook`, 'GET', { 'x-user': party('d') })).status).toBe(200);
    expect((await call(`${gw.url}/v1/orderbook`, 'GET', { 'x-user': party('e'), 'x-session-id': 'sess-a' })).status).toBe(429);
  });

  it('does not limit routes outside the trading plugin', async () => {
    for (let i = 0; i < 5; i++) expect((await call(`${gw.url}/healthz`, 'GET')).status).toBe(200);
  });
});
