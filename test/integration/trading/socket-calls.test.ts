// Orders over the stream socket reach the engine exactly as REST forwards them (the signing headers,
// the content type, the raw body bytes, the target; nothing else), and spend the same per-address
// budget as REST: one counter for both. A fake engine records what it receives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { connect, type Msg, type TestClient } from '../stream/helpers.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const SIG = `${Date.now()}.${'ab'.repeat(64)}`;
const SIGNING = { 'x-user': `alice::${'c'.repeat(64)}`, 'x-session-id': 'sess-1', 'x-session-sig': SIG };

async function ask(c: TestClient, message: Record<string, unknown>): Promise<Msg & { id: unknown }> {
  const before = c.messages.length;
  c.ws.send(JSON.stringify(message));
  const mine = (m: Msg) => (m as unknown as { id?: unknown }).id === message.id;
  await c.waitFor((ms) => ms.slice(before).some(mine));
  return c.messages.slice(before).find(mine) as Msg & { id: unknown };
}

describe('orders over the socket, as the REST proxy forwards them', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = () => okJson({ ok: true, orderId: 'o-1', status: 'open' });
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_IP_MAX: '6', RATE_LIMIT_WINDOW_MS: '60000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  it('forwards the same method, target, headers and body bytes as REST', async () => {
    const c = await connect(gw.url);
    // Unusual spacing: the bytes are forwarded, not re-encoded.
    const body = '{ "market":"BTC-PERP" ,"side":"buy","type":"limit","size":"0.01","price":"60000" }';
    await request(`${gw.url}/v1/orders`, { method: 'POST', body, headers: { ...SIGNING, 'content-type': 'application/json', cookie: 'a=b' } }).then((r) => r.body.text());
    const answer = await ask(c, { op: 'order.place', id: 1, body, user: SIGNING['x-user'], sessionId: SIGNING['x-session-id'], sig: SIG });
    expect(answer).toMatchObject({ kind: 'stream.answer', payload: { status: 200, body: { ok: true, orderId: 'o-1', status: 'open' } } });
    await request(`${gw.url}/v1/orders/o%3A1`, { method: 'DELETE', headers: SIGNING }).then((r) => r.body.text());
    await ask(c, { op: 'order.cancel', id: 2, orderId: 'o:1', user: SIGNING['x-user'], sessionId: SIGNING['x-session-id'], sig: SIG });
    const [restPlace, socketPlace, restCancel, socketCancel] = engine.requests.slice(-4);
    const strip = (r: typeof restPlace) => ({ method: r!.method, url: r!.url, body: r!.body, headers: { ...r!.headers, 'x-request-id': undefined } });
    expect(strip(socketPlace)).toEqual(strip(restPlace));
    expect(strip(socketCancel)).toEqual(strip(restCancel));
    expect(socketPlace!.body.toString('utf8')).toBe(body);
    expect(Object.keys(socketPlace!.headers).sort()).toEqual(['connection', 'content-length', 'content-type', 'host', 'x-request-id', 'x-session-id', 'x-session-sig', 'x-user']);
    c.ws.close();
  });

  it('REST requests and socket orders of one address spend one budget (RATE_LIMIT_IP_MAX)', async () => {
    const c = await connect(gw.url);
    // The first test spent 4 of the 6 (two REST calls, two socket orders): one more of each passes.
    const unsigned = (id: number) => ask(c, { op: 'order.cancel', id, orderId: 'x' });
    expect((await unsigned(10)).payload).toMatchObject({ code: 'unauthorized' });
    expect((await request(`${gw.url}/v1/orders/x`, { method: 'DELETE' })).statusCode).toBe(401);
    expect((await unsigned(11)).payload).toMatchObject({ code: 'rate_limited', status: 429, retryAfterS: expect.any(Number) });
    expect((await request(`${gw.url}/v1/orders/x`, { method: 'DELETE' })).statusCode).toBe(429);
    c.ws.close();
  });
});
