// The trading routes refuse a body that is not an engine request by the contract's shape, before
// anything is forwarded (issue 29: the engine copies an order's body, unknown fields included, into
// its inbound.order event, so one order with a huge body stopped the stream). Over real HTTP and a
// real WebSocket against a gateway on the reference engine: each refused call is 400 invalid_body
// naming the field, and the engine's history does not move (it saw nothing); a valid body, however
// it is spelled, is still forwarded and placed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { faucet, makeParty, SigningClient } from '../../sandbox/engine/helpers.js';
import { startLiveGateway, type TestGateway } from '../../support/gateway.js';
import { connect, type Msg } from '../../integration/stream/helpers.js';

const VALID = { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '40000' };

describe('trading bodies of the contract shape only', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: SigningClient;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await startLiveGateway({ url: engine.url, adminToken: engine.adminToken }, { RATE_LIMIT_MAX: '1000', RATE_LIMIT_IP_MAX: '10000' });
    alice = new SigningClient(gw.url, makeParty('alice'));
    expect((await alice.authorize()).body).toMatchObject({ ok: true });
    expect((await faucet(engine.url, engine.adminToken, alice.id, '1000000')).body).toMatchObject({ ok: true });
  });
  afterAll(async () => {
    await gw?.close();
  });

  const orderCases: Array<[string, string, string | undefined]> = [
    ['an unknown field', JSON.stringify({ ...VALID, junk: [1e20, 1e20] }), 'junk'],
    ['an unknown field inside tp', JSON.stringify({ ...VALID, tp: { triggerPrice: '50000', junk: 'x' } }), 'tp.junk'],
    ['a number for size', JSON.stringify({ ...VALID, size: 0.01 }), 'size'],
    ['a number for price', JSON.stringify({ ...VALID, price: 40000 }), 'price'],
    ['a number for a trigger price', JSON.stringify({ ...VALID, sl: { triggerPrice: 30000 } }), 'sl.triggerPrice'],
    ['a side outside the enum', JSON.stringify({ ...VALID, side: 'BUY' }), 'side'],
    ['a type outside the enum', JSON.stringify({ ...VALID, type: 'stop' }), 'type'],
    ['a tif outside the enum', JSON.stringify({ ...VALID, tif: 'fok' }), 'tif'],
    ['reduceOnly as a string', JSON.stringify({ ...VALID, reduceOnly: 'true' }), 'reduceOnly'],
    ['a clientOrderId over 64 characters', JSON.stringify({ ...VALID, clientOrderId: 'c'.repeat(65) }), 'clientOrderId'],
    ['a decimal string over 40 characters', JSON.stringify({ ...VALID, size: `0.${'1'.repeat(60)}` }), 'size'],
    ['a market over 64 characters', JSON.stringify({ ...VALID, market: 'M'.repeat(65) }), 'market'],
    ['a missing size', JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', price: '40000' }), 'size'],
    ['an array', JSON.stringify([VALID]), undefined],
    ['a body over 4096 bytes (valid fields, padded)', `${JSON.stringify(VALID).slice(0, -1)}${' '.repeat(4200)}}`, undefined],
  ];

  it('POST /v1/orders: 400 invalid_body naming the field, never forwarded', { timeout: 30_000 }, async () => {
    const head = engine.engine.log.maxSeq;
    for (const [name, body, field] of orderCases) {
      const res = await alice.signed('POST', '/v1/orders', body);
      expect([name, res.status, res.body.code, res.body.field]).toEqual([name, 400, 'invalid_body', field]);
    }
    // Not JSON at all: the body parser's 400 bad_request, before the route.
    const notJson = await alice.signed('POST', '/v1/orders', '{"market":');
    expect([notJson.status, notJson.body.code]).toEqual([400, 'bad_request']);
    expect(engine.engine.log.maxSeq).toBe(head); // no inbound.order: the engine saw none of them
    // The contract's shape, spelled as the client likes (spaces, key order, nulls for absent optionals), is forwarded as signed.
    const spelled = `{ "price" : "40000", "size": "0.01", "type": "limit", "side": "buy", "market": "BTC-PERP", "clientOrderId": null, "tp": null }`;
    const placed = await alice.signed('POST', '/v1/orders', spelled);
    expect([placed.status, placed.body.ok]).toEqual([200, true]);
    const inbound = engine.engine.log.eventsSince(head).find((e) => e.kind === 'inbound.order')!;
    expect(inbound.payload.request).toEqual(JSON.parse(spelled));
    // A malformed decimal string is still the engine's business answer (HTTP 200 ok:false), not the gateway's 400.
    const badGrid = await alice.signed('POST', '/v1/orders', JSON.stringify({ ...VALID, size: '1e3' }));
    expect([badGrid.status, badGrid.body.ok, badGrid.body.code]).toEqual([200, false, 'invalid_size']);
  });

  it('POST /v1/tpsl, POST /v1/session-auth and POST /v1/user/me: the same', { timeout: 30_000 }, async () => {
    const head = engine.engine.log.maxSeq;
    const tpsl = await alice.signed('POST', '/v1/tpsl', JSON.stringify({ market: 'BTC-PERP', tp: { triggerPrice: 50000 } }));
    expect([tpsl.status, tpsl.body.code, tpsl.body.field]).toEqual([400, 'invalid_body', 'tp.triggerPrice']);
    const tpslExtra = await alice.signed('POST', '/v1/tpsl', JSON.stringify({ market: 'BTC-PERP', note: 'x'.repeat(3000) }));
    expect([tpslExtra.status, tpslExtra.body.code, tpslExtra.body.field]).toEqual([400, 'invalid_body', 'note']);
    const auth = JSON.parse(SigningClient.sessionAuthBody(alice.party, alice.session, Date.now() + 60_000)) as Record<string, unknown>;
    const authRes = await fetch(`${gw.url}/v1/session-auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...auth, junk: 1 }) });
    expect([authRes.status, ((await authRes.json()) as { code: string }).code]).toEqual([400, 'invalid_body']);
    const meRes = await fetch(`${gw.url}/v1/user/me`, {
      method: 'POST',
      headers: alice.signHeaders('GET', '/v1/user/me', JSON.stringify({ party: alice.id, junk: 1 })),
      body: JSON.stringify({ party: alice.id, junk: 1 }),
    });
    expect([meRes.status, ((await meRes.json()) as { code: string }).code]).toEqual([400, 'invalid_body']);
    expect(engine.engine.log.maxSeq).toBe(head);
  });

  it("the socket's order.place: stream.error invalid_body (400), never forwarded", { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const head = engine.engine.log.maxSeq;
    const ask = async (id: string, body: string): Promise<Msg> => {
      const h = alice.signHeaders('POST', '/v1/orders', body);
      c.ws.send(JSON.stringify({ op: 'order.place', id, body, user: h['x-user'], sessionId: h['x-session-id'], sig: h['x-session-sig'] }));
      await c.waitFor((ms) => ms.some((m) => (m as Msg & { id?: unknown }).id === id));
      return c.messages.find((m) => (m as Msg & { id?: unknown }).id === id)!;
    };
    for (const [name, body, field] of orderCases.slice(0, 6)) {
      const a = await ask(name, body);
      expect([name, a.kind, a.payload.code, a.payload.status]).toEqual([name, 'stream.error', 'invalid_body', 400]);
      expect(a.payload.error).toContain(field!);
    }
    expect(engine.engine.log.maxSeq).toBe(head);
    const ok = await ask('fine', JSON.stringify(VALID));
    expect(ok).toMatchObject({ kind: 'stream.answer', payload: { status: 200, body: { ok: true } } });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });
});
