// The signed proxy over real loopback HTTP: gateway ⇄ a programmable fake engine that records
// exactly what it received.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const PARTY = `alice::${'a'.repeat(64)}`;
const SIG = `1763700000000.${'b'.repeat(128)}`;
const SIGNED = { 'x-user': PARTY, 'x-session-id': 'sess-1', 'x-session-sig': SIG };
/** An order request of the contract's shape (the gateway refuses any other before forwarding). */
const ORDER = '{"market":"BTC-PERP","side":"buy","type":"limit","size":"0.0001","price":"1"}';

async function call(base: string, method: string, path: string, opts: { headers?: Record<string, string> | string[]; body?: string } = {}) {
  const res = await request(base + path, { method: method as 'GET', headers: opts.headers ?? {}, body: opts.body ?? null });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

describe('signed trading proxy against a fake engine', () => {
  let engine: FakeEngine;
  let gw: TestGateway;

  beforeAll(async () => {
    engine = await startFakeEngine();
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, ENGINE_TIMEOUT_MS: '300', RATE_LIMIT_MAX: '100000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });
  beforeEach(() => {
    engine.requests.length = 0;
    engine.respond = () => okJson({ ok: true, orderId: 'o-1', status: 'open', filledSize: '0.0000000000', avgPrice: null });
  });

  it('forwards the three headers, the raw body bytes and the signed target unchanged, and nothing else', async () => {
    const body = '{ "market":"BTC-PERP",  "side":"buy","type":"limit","size":"0.5","price":"65000" }';
    const res = await call(gw.url, 'POST', '/v1/orders', {
      headers: { ...SIGNED, 'content-type': 'application/json', cookie: 'secret=1', origin: 'https://app.example', 'x-other': 'no', 'x-request-id': 'front-1' },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('front-1');
    expect(res.json).toEqual({ ok: true, orderId: 'o-1', status: 'open', filledSize: '0.0000000000', avgPrice: null });
    expect(engine.requests).toHaveLength(1);
    const got = engine.requests[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/v1/orders');
    expect(got.body.toString('utf8')).toBe(body);
    expect(got.headers['x-user']).toEqual([PARTY]);
    expect(got.headers['x-session-id']).toEqual(['sess-1']);
    expect(got.headers['x-session-sig']).toEqual([SIG]);
    expect(got.headers['content-type']).toEqual(['application/json']);
    expect(got.headers['x-request-id']).toEqual(['front-1']);
    expect(got.headers.cookie).toBeUndefined();
    expect(got.headers.origin).toBeUndefined();
    expect(got.headers['x-other']).toBeUndefined();
  });

  it('forwards a JSON body labelled text/plain byte for byte (the signature covers those bytes)', async () => {
    const body = '{"market":"BTC-PERP","side":"sell","type":"market","size":"0.25"}';
    const res = await call(gw.url, 'POST', '/v1/orders', {
      headers: { ...SIGNED, 'content-type': 'text/plain;charset=UTF-8' },
      body,
    });
    expect(res.status).toBe(200);
    expect(engine.requests).toHaveLength(1);
    expect(engine.requests[0]!.body.toString('utf8')).toBe(body);
    expect(engine.requests[0]!.headers['content-type']).toEqual(['application/json']);
  });

  it('refuses a body that is not JSON with 415 before it reaches the engine', async () => {
    const res = await call(gw.url, 'POST', '/v1/orders', {
      headers: { ...SIGNED, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'market=BTC-PERP&side=buy',
    });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ error: 'request body must be JSON', code: 'unsupported_media_type' });
    expect(engine.requests).toHaveLength(0);
  });

  it('passes HTTP 200 ok:false rejections through byte for byte, 0x0C included', async () => {
    const rejection = '{"ok":false,"code":"0x0C","error":"notional 5.0000000000 below minimum 10.0000000000"}';
    engine.respond = () => ({ status: 200, body: rejection, headers: { 'content-type': 'application/json' } });
    const res = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: ORDER });
    expect(res.status).toBe(200);
    expect(res.text).toBe(rejection);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it.each([
    ['X-User', 'x-user'],
    ['X-Session-Id', 'x-session-id'],
    ['X-Session-Sig', 'x-session-sig'],
  ])('answers 401 without %s and never calls the engine', async (_name, header) => {
    const headers: Record<string, string> = { ...SIGNED, 'content-type': 'application/json' };
    delete headers[header];
    const res = await call(gw.url, 'POST', '/v1/orders', { headers, body: ORDER });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'signed request required: headers X-User, X-Session-Id and X-Session-Sig', code: 'unauthorized' });
    expect(engine.requests).toHaveLength(0);
  });

  it('answers 401 on DELETE, tpsl and user/me without headers, engine untouched', async () => {
    expect((await call(gw.url, 'DELETE', '/v1/orders/o-1')).status).toBe(401);
    expect((await call(gw.url, 'POST', '/v1/tpsl', { headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect((await call(gw.url, 'GET', '/v1/user/me', { headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    expect(engine.requests).toHaveLength(0);
  });

  it('refuses a duplicated X-User (repeated header or a comma) with 400, never forwarded', async () => {
    const repeated = ['x-user', PARTY, 'x-user', PARTY, 'x-session-id', 'sess-1', 'x-session-sig', SIG, 'content-type', 'application/json'];
    const a = await call(gw.url, 'POST', '/v1/orders', { headers: repeated, body: ORDER });
    expect(a.status).toBe(400);
    expect(a.json.code).toBe('bad_request');
    expect(a.json.error).toContain('X-User');
    const b = await call(gw.url, 'DELETE', '/v1/orders/o-1', { headers: { ...SIGNED, 'x-user': `${PARTY},${PARTY}` } });
    expect(b.status).toBe(400);
    expect(engine.requests).toHaveLength(0);
  });

  it('turns an HTML 502 from the engine into JSON 502 engine_unavailable carrying engineStatus and CORS headers', async () => {
    engine.respond = () => ({ status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' });
    const res = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json', origin: 'https://app.example' }, body: ORDER });
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: 'the engine answered HTTP 502 with a non-JSON body', code: 'engine_unavailable', engineStatus: 502 });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('turns a 200 with a non-JSON body and a JSON 500 into 502 with the engine status', async () => {
    engine.respond = () => ({ status: 200, body: 'OK' });
    const a = await call(gw.url, 'DELETE', '/v1/orders/o-9', { headers: SIGNED });
    expect(a.status).toBe(502);
    expect(a.json).toEqual({ error: 'the engine answered with a body that is not a JSON object', code: 'engine_unavailable', engineStatus: 200 });
    engine.respond = () => okJson({ ok: false, code: 'internal', error: 'internal error' }, 500);
    const b = await call(gw.url, 'DELETE', '/v1/orders/o-9', { headers: SIGNED });
    expect(b.status).toBe(502);
    expect(b.json).toEqual({ error: 'the engine answered HTTP 500 with an error', code: 'engine_unavailable', engineStatus: 500 });
  });

  it('does not trust a JSON content type on a body that is not a JSON object', async () => {
    for (const text of ['<html>oops</html>', '[1,2]', '{"ok":true']) {
      engine.respond = () => ({ status: 200, body: text, headers: { 'content-type': 'application/json' } });
      const res = await call(gw.url, 'DELETE', '/v1/orders/o-9', { headers: SIGNED });
      expect(res.status).toBe(502);
      expect(res.json).toEqual({ error: 'the engine answered with a body that is not a JSON object', code: 'engine_unavailable', engineStatus: 200 });
    }
  });

  it('passes engine 4xx JSON errors through with their status (they already carry error + code)', async () => {
    for (const [status, code] of [
      [400, 'bad_request'],
      [401, 'unauthorized'],
      [404, 'not_found'],
    ] as const) {
      const text = JSON.stringify({ ok: false, code, error: `engine said ${status}` });
      engine.respond = () => ({ status, body: text, headers: { 'content-type': 'application/json' } });
      const res = await call(gw.url, 'POST', '/v1/tpsl', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: '{"market":"BTC-PERP"}' });
      expect(res.status).toBe(status);
      expect(res.text).toBe(text);
    }
  });

  it('keeps the engine Retry-After on a 429 and completes a 4xx body that lacks code', async () => {
    engine.respond = () => ({ status: 429, body: { ok: false, code: 'rate_limited', error: 'too many requests' }, headers: { 'retry-after': '2' } });
    const a = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: ORDER });
    expect(a.status).toBe(429);
    expect(a.headers['retry-after']).toBe('2');
    expect(a.json).toEqual({ ok: false, code: 'rate_limited', error: 'too many requests' });
    engine.respond = () => okJson({ error: 'unauthorized' }, 401);
    const b = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: ORDER });
    expect(b.status).toBe(401);
    expect(b.json).toEqual({ error: 'unauthorized', code: 'unauthorized', engineStatus: 401 });
  });

  it('answers 504 engine_timeout when the engine does not answer within ENGINE_TIMEOUT_MS', async () => {
    engine.respond = () => ({ hang: true });
    const started = performance.now();
    const res = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: ORDER });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    expect(res.json).toEqual({ error: 'the engine did not answer in time', code: 'engine_timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(3000);
  });

  it('answers 502 engine_unavailable when the engine resets the connection', async () => {
    engine.respond = () => ({ reset: true });
    const res = await call(gw.url, 'DELETE', '/v1/orders/o-2', { headers: SIGNED });
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: 'the engine is unreachable', code: 'engine_unavailable' });
  });

  it('cancels with the signed target and no body', async () => {
    engine.respond = () => okJson({ ok: true, orderId: 'o 7', status: 'cancelled' });
    const res = await call(gw.url, 'DELETE', '/v1/orders/o%207', { headers: SIGNED });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ok: true, orderId: 'o 7', status: 'cancelled' });
    const got = engine.requests[0]!;
    expect(got).toMatchObject({ method: 'DELETE', url: '/v1/orders/o%207' });
    expect(got.body.length).toBe(0);
    expect(got.headers['content-type']).toBeUndefined();
  });

  it('rejects an order id longer than 64 characters with 400 before the engine', async () => {
    const res = await call(gw.url, 'DELETE', `/v1/orders/${'x'.repeat(65)}`, { headers: SIGNED });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'path parameter "orderId" must NOT have more than 64 characters', code: 'bad_request' });
    expect(engine.requests).toHaveLength(0);
  });

  it('forwards the JSON body of GET /v1/user/me byte for byte', async () => {
    engine.respond = () => okJson({ ok: true, party: PARTY, balance: '5.0000000000', positions: [], openOrders: [], triggers: [] });
    const body = `{"party":"${PARTY}"}`;
    const res = await call(gw.url, 'GET', '/v1/user/me', { headers: { ...SIGNED, 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(res.json.balance).toBe('5.0000000000');
    const got = engine.requests[0]!;
    expect(got).toMatchObject({ method: 'GET', url: '/v1/user/me' });
    expect(got.body.toString()).toBe(body);
    expect(got.headers['content-type']).toEqual(['application/json']);
  });

  it('refuses GET /v1/user/me without a body or with a non-JSON body (400, engine untouched)', async () => {
    const a = await call(gw.url, 'GET', '/v1/user/me', { headers: SIGNED });
    expect(a.status).toBe(400);
    expect(a.json).toEqual({ error: 'GET /v1/user/me needs the signed JSON body {"party": <X-User>}', code: 'bad_request' });
    const b = await call(gw.url, 'GET', '/v1/user/me', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: '{nope' });
    expect(b.status).toBe(400);
    expect(b.json.code).toBe('bad_request');
    expect(engine.requests).toHaveLength(0);
  });

  it('answers 400 (never hangs) when the GET /v1/user/me body does not arrive', async () => {
    const { port } = new URL(gw.url);
    const started = performance.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        const head = Object.entries({ ...SIGNED, 'content-type': 'application/json', 'content-length': '40' })
          .map(([k, v]) => `${k}: ${v}`)
          .join('\r\n');
        socket.write(`GET /v1/user/me HTTP/1.1\r\nhost: x\r\n${head}\r\n\r\n{"par`); // 5 of 40 bytes, then silence
      });
      let text = '';
      socket.on('data', (c) => {
        text += c.toString();
        if (text.includes('\r\n\r\n{')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
    expect(answer.startsWith('HTTP/1.1 400')).toBe(true);
    expect(answer).toContain('{"error":"the request body did not arrive in time","code":"bad_request"}');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(engine.requests).toHaveLength(0);
  });

  it('serves the public order book with depth defaulted to 20 and no signing headers forwarded', async () => {
    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 9, depth: 20, bids: [['1.0000000000', '2.0000000000']], asks: [] });
    const res = await call(gw.url, 'GET', '/v1/orderbook', { headers: SIGNED });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ market: 'BTC-PERP', seq: 9, depth: 20, bids: [['1.0000000000', '2.0000000000']], asks: [] });
    expect(engine.requests[0]!.url).toBe('/v1/orderbook?depth=20');
    expect(engine.requests[0]!.headers['x-user']).toBeUndefined();
    await call(gw.url, 'GET', '/v1/orderbook?depth=5&market=ETH-PERP');
    expect(engine.requests[1]!.url).toBe('/v1/orderbook?depth=5&market=ETH-PERP');
  });

  it.each([
    ['depth=0', 'query parameter "depth" must be an integer from 1 to 100, got "0"'],
    ['depth=101', 'query parameter "depth" must be an integer from 1 to 100, got "101"'],
    ['depth=abc', 'query parameter "depth" must be an integer from 1 to 100, got "abc"'],
    ['depth=2.5', 'query parameter "depth" must be an integer from 1 to 100, got "2.5"'],
    ['depth=1e1', 'query parameter "depth" must be an integer from 1 to 100, got "1e1"'],
    ['depht=5', 'query parameter "depht" is not allowed'],
    ['market=BTC%20PERP', 'query parameter "market" has an invalid format'],
    ['market=', 'query parameter "market" has an invalid format'],
  ])('refuses /v1/orderbook?%s with 400', async (query, message) => {
    const res = await call(gw.url, 'GET', `/v1/orderbook?${query}`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: message, code: 'bad_request' });
    expect(engine.requests).toHaveLength(0);
  });

  it('serves no HEAD twin of the proxied GET routes (404, engine untouched)', async () => {
    expect((await call(gw.url, 'HEAD', '/v1/orderbook')).status).toBe(404);
    expect((await call(gw.url, 'HEAD', '/v1/user/me', { headers: SIGNED })).status).toBe(404);
    expect(engine.requests).toHaveLength(0);
  });

  it('forwards session-auth unsigned and teaches the new session to the guard', async () => {
    const sessionKey = 'c'.repeat(64);
    const validKey = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c'; // RFC 8032 test 1 public key
    const expiresAt = Date.now() + 60_000;
    engine.respond = () => okJson({ ok: true, sessionId: 'sess-new', expiresAt });
    const body = JSON.stringify({ party: PARTY, sessionPublicKey: validKey, expiresAt, signature: 'd'.repeat(128) });
    const res = await call(gw.url, 'POST', '/v1/session-auth', { headers: { 'content-type': 'application/json', 'x-user': PARTY }, body });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ok: true, sessionId: 'sess-new', expiresAt });
    expect(engine.requests[0]!.body.toString()).toBe(body);
    expect(engine.requests[0]!.headers['x-user']).toBeUndefined();
    const learnt = await gw.deps.sessions.get('sess-new');
    expect(learnt).toMatchObject({ sessionId: 'sess-new', party: PARTY, expiresAtMs: expiresAt });
    // A rejected session-auth teaches nothing.
    engine.respond = () => okJson({ ok: false, code: 'invalid_signature', error: 'party signature does not verify' });
    const rejected = JSON.stringify({ party: PARTY, sessionPublicKey: sessionKey, expiresAt, signature: 'd'.repeat(128) });
    const r2 = await call(gw.url, 'POST', '/v1/session-auth', { headers: { 'content-type': 'application/json' }, body: rejected });
    expect(r2.json).toEqual({ ok: false, code: 'invalid_signature', error: 'party signature does not verify' });
  });

  it('refuses a session-auth without a body or with malformed JSON with 400', async () => {
    const a = await call(gw.url, 'POST', '/v1/session-auth', { headers: { 'content-type': 'application/json' } });
    expect(a.status).toBe(400);
    const b = await call(gw.url, 'POST', '/v1/session-auth', { headers: { 'content-type': 'application/json' }, body: '{"party":' });
    expect(b.status).toBe(400);
    expect(b.json).toEqual({ error: 'request body is not valid JSON', code: 'bad_request' });
    expect(engine.requests).toHaveLength(0);
  });

  it('reuses keep-alive connections to the engine', async () => {
    for (let i = 0; i < 10; i++) await call(gw.url, 'GET', '/v1/orderbook?depth=1');
    const ports = new Set(engine.requests.map((r) => r.remotePort));
    expect(engine.requests).toHaveLength(10);
    expect(ports.size).toBe(1);
  });

  it('documents the routes, bodies and security headers in OpenAPI', async () => {
    const doc = (await gw.app.inject('/docs/json')).json();
    const order = doc.paths['/v1/orders'].post;
    expect(order.security).toEqual([{ xUser: [], xSessionId: [], xSessionSig: [] }]);
    expect(Object.keys(order.requestBody.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['market', 'side', 'type', 'size', 'price', 'tif', 'reduceOnly', 'clientOrderId', 'tp', 'sl']),
    );
    expect(order.responses['200']).toBeDefined();
    expect(order.responses['502']).toBeDefined();
    // A place whose clientOrderId the party already used is 409 (docs/trading.md "Client order ids").
    expect(order.responses['409'].description).toContain('duplicate_client_order_id');
    expect(doc.paths['/v1/orders/{orderId}'].delete.security).toHaveLength(1);
    expect(doc.paths['/v1/tpsl'].post.requestBody).toBeDefined();
    expect(doc.paths['/v1/session-auth'].post.security).toEqual([]);
    expect(doc.paths['/v1/orderbook'].get.security).toEqual([]);
    expect(order.operationId).toBe('placeOrder');
    expect(doc.paths['/v1/user/me'].get.security).toHaveLength(1);
    const depth = doc.paths['/v1/orderbook'].get.parameters.find((p: { name: string }) => p.name === 'depth');
    expect(depth.schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
    expect(doc.paths['/v1/users/{party}/faucet'].post.security).toEqual([{ xUser: [], xSessionId: [], xSessionSig: [] }]);
  });
});

describe('signed trading proxy with the engine down', () => {
  it('answers 502 engine_unavailable when the engine refuses connections', async () => {
    const gw = await startGateway({ ENGINE_BASE_URL: 'http://127.0.0.1:9', ENGINE_TIMEOUT_MS: '500' }, { listen: true });
    try {
      const res = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: ORDER });
      expect(res.status).toBe(502);
      expect(res.json).toEqual({ error: 'the engine is unreachable', code: 'engine_unavailable' });
      const book = await call(gw.url, 'GET', '/v1/orderbook');
      expect(book.status).toBe(502);
    } finally {
      await gw.close();
    }
  });
});
