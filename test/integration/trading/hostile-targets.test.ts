// What an attacker can put in the request line and the signing headers of a proxied call: the
// engine only ever receives the origin-form target built from validated parameters (which must be
// what the client signed), each signing header once, and bodies within the limit (413).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const PARTY = `alice::${'a'.repeat(64)}`;
const SIG = `1763700000000.${'b'.repeat(128)}`;
const SIGNED = { 'x-user': PARTY, 'x-session-id': 'sess-1', 'x-session-sig': SIG };

async function call(base: string, method: string, path: string, opts: { headers?: Record<string, string | string[]>; body?: string | Buffer } = {}) {
  const res = await request(base + path, { method: method as 'GET', headers: opts.headers ?? {}, body: opts.body ?? null });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

/** Sends raw bytes and returns the status line and body of the answer. */
function raw(url: string, bytes: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let data = '';
    socket.on('data', (c) => {
      data += c.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1] ?? 0), body });
    });
  });
}

describe('proxied request targets and signing headers', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  beforeAll(async () => {
    engine = await startFakeEngine();
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });
  beforeEach(() => {
    engine.requests.length = 0;
    engine.respond = () => okJson({ ok: true, orderId: 'o-1', status: 'cancelled' });
  });

  it('refuses an absolute-form target instead of forwarding it', async () => {
    const body = '{"market":"BTC-PERP","side":"buy","type":"market","size":"1"}';
    const res = await raw(
      gw.url,
      `POST http://evil.example/v1/orders HTTP/1.1\r\nHost: evil.example\r\nX-User: ${PARTY}\r\nX-Session-Id: sess-1\r\nX-Session-Sig: ${SIG}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'bad_request' });
    expect(engine.requests).toHaveLength(0);
  });

  it('refuses an order id that encodes a path, and a non-canonical encoding of an id', async () => {
    expect(await call(gw.url, 'DELETE', '/v1/orders/..%2Fadmin%2Fevents%2Fstream', { headers: SIGNED })).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    // Raw, so no client URL normalisation resolves the dots first.
    const dots = await raw(gw.url, `DELETE /v1/orders/%2E%2E HTTP/1.1\r\nHost: x\r\nX-User: ${PARTY}\r\nX-Session-Id: sess-1\r\nX-Session-Sig: ${SIG}\r\nConnection: close\r\n\r\n`);
    expect(dots.status).toBe(400);
    // "o%2D1" decodes to "o-1", whose canonical target is /v1/orders/o-1: what the engine would verify is not what was signed.
    expect(await call(gw.url, 'DELETE', '/v1/orders/o%2D1', { headers: SIGNED })).toMatchObject({ status: 400 });
    expect(await call(gw.url, 'POST', '/v1/orders?trace=1', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: '{}' })).toMatchObject({ status: 400 });
    expect(engine.requests).toHaveLength(0);
  });

  it('forwards the canonical encoding of an id as sent', async () => {
    expect((await call(gw.url, 'DELETE', '/v1/orders/a%20b', { headers: SIGNED })).status).toBe(200);
    expect(engine.requests.map((r) => r.url)).toEqual(['/v1/orders/a%20b']);
  });

  it('refuses a repeated X-Session-Id or X-Session-Sig with 400, never forwarded', async () => {
    const twiceId = await call(gw.url, 'DELETE', '/v1/orders/o-1', { headers: { ...SIGNED, 'x-session-id': ['sess-1', 'sess-2'] } });
    expect(twiceId).toEqual({ status: 400, json: { error: 'header "X-Session-Id" must be sent exactly once', code: 'bad_request' } });
    const twiceSig = await call(gw.url, 'DELETE', '/v1/orders/o-1', { headers: { ...SIGNED, 'x-session-sig': [SIG, SIG] } });
    expect(twiceSig).toEqual({ status: 400, json: { error: 'header "X-Session-Sig" must be sent exactly once', code: 'bad_request' } });
    expect(engine.requests).toHaveLength(0);
  });

  it('answers 413 payload_too_large for an oversize body, on GET /v1/user/me too', async () => {
    const big = `{"party":"${'x'.repeat(1_048_576)}"}`;
    const me = await call(gw.url, 'GET', '/v1/user/me', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: big });
    expect(me).toMatchObject({ status: 413, json: { code: 'payload_too_large' } });
    const order = await call(gw.url, 'POST', '/v1/orders', { headers: { ...SIGNED, 'content-type': 'application/json' }, body: big });
    expect(order).toMatchObject({ status: 413, json: { code: 'payload_too_large' } });
    expect(engine.requests).toHaveLength(0);
  });
});
