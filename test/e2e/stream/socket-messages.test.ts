// Talking to the socket (docs/stream.md "Talking to the socket"), over a real WebSocket against
// the reference engine: subscribe / unsubscribe answered by stream.ack with the filters as applied
// (and the snapshot of what was added), or stream.error with a code and the id for every bad
// input; signed orders placed and cancelled over the socket with the engine's answer; one signed
// request accepted once across REST and the socket (the same replay memory); one party budget for
// both; unsigned and forged messages refused with the REST code.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { faucet, http, makeParty, signHex, SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { LiveRuntime } from '../../../src/live.js';
import { connect, type Msg, type TestClient } from '../../integration/stream/helpers.js';
import { verifySignedRequest } from '../../../src/auth/signed-request.js';

/** Sends a message and resolves with the answer carrying its id. */
async function ask(c: TestClient, message: Record<string, unknown>): Promise<Msg & { id: unknown; op: unknown }> {
  const before = c.messages.length;
  c.ws.send(JSON.stringify(message));
  const mine = (m: Msg) => (m as unknown as { id?: unknown }).id === message.id && (m.kind === 'stream.ack' || m.kind === 'stream.error' || m.kind === 'stream.answer');
  await c.waitFor((ms) => ms.slice(before).some(mine), 10_000);
  return c.messages.slice(before).find(mine) as Msg & { id: unknown; op: unknown };
}

describe('talking to the socket (reference engine)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: SigningClient;
  let bob: SigningClient;

  const streamProof = (c: SigningClient) => {
    const ts = c.nextTs();
    return { user: c.id, sessionId: c.sessionId, sig: `${ts}.${signHex(c.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}` };
  };
  /** The signature fields of a socket order message: the REST headers' values. */
  const signature = (c: SigningClient, method: string, path: string, body: string) => {
    const h = c.signHeaders(method, path, body);
    return { user: h['x-user'], sessionId: h['x-session-id'], sig: h['x-session-sig'] };
  };
  const orderBody = (o: Record<string, unknown>) => JSON.stringify(o);

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine, { RATE_LIMIT_MAX: '12', RATE_LIMIT_IP_MAX: '10000', RATE_LIMIT_WINDOW_MS: '60000' });
    alice = new SigningClient(gw.url, makeParty('alice'));
    bob = new SigningClient(gw.url, makeParty('bob'));
    for (const c of [alice, bob]) {
      expect((await c.authorize()).body).toMatchObject({ ok: true });
      expect((await faucet(engine.url, engine.adminToken, c.id, '1000000')).body).toMatchObject({ ok: true });
    }
    await waitFor(() => (gw.deps.live as LiveRuntime).knownMarkets() !== null, 5_000, 'market list');
  });

  it('subscribe adds markets, kinds and a book view, acks the filters and sends the snapshot of what was added', { timeout: 30_000 }, async () => {
    // A resting ask so BTC-PERP has a book and a view snapshot to send.
    expect((await bob.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '61000' })).body).toMatchObject({ ok: true });
    const c = await connect(gw.url, 'kinds=trade&markets=ETH-PERP');
    const ack = await ask(c, { op: 'subscribe', id: 's1', kinds: ['orderbook.delta'], markets: ['BTC-PERP'], depth: 5, group: 'sig:3' });
    expect(ack).toMatchObject({ kind: 'stream.ack', id: 's1', op: 'subscribe' });
    expect(ack.payload).toEqual({
      kinds: ['trade', 'orderbook.delta', 'orderbook.snapshot'],
      markets: ['ETH-PERP', 'BTC-PERP'],
      marketsIgnored: false,
      intervals: null,
      parties: [],
      book: { depth: 5, group: 'sig:3' },
    });
    // The view's snapshot of BTC-PERP follows the ack (once the book is read from the engine: the first view of it).
    await c.waitFor((ms) => ms.some((m) => m.kind === 'orderbook.snapshot' && m.market === 'BTC-PERP'));
    const i = c.messages.indexOf(ack);
    const snap = c.messages.findIndex((m) => m.kind === 'orderbook.snapshot' && m.market === 'BTC-PERP');
    expect(snap).toBeGreaterThan(i);
    expect(c.messages[snap]!.payload).toMatchObject({ depth: 5, grouping: 'sig:3' });
    // Then live deltas of the new view; trades of the new market.
    expect((await bob.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.02', price: '61500' })).body).toMatchObject({ ok: true });
    await c.waitFor((ms) => ms.some((m) => m.kind === 'orderbook.delta' && m.market === 'BTC-PERP'));
    expect(c.schemaErrors).toEqual([]);

    // Unsubscribing the market: no more frames of it; the ack says so.
    const un = await ask(c, { op: 'unsubscribe', id: 7, markets: ['BTC-PERP'] });
    expect(un).toMatchObject({ kind: 'stream.ack', id: 7, op: 'unsubscribe' });
    expect(un.payload.markets).toEqual(['ETH-PERP']);
    const after = c.messages.length;
    expect((await bob.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.03', price: '61600' })).body).toMatchObject({ ok: true });
    const probe = await ask(c, { op: 'subscribe', id: 'probe', kinds: ['trade'] }); // a round trip after the order's events
    expect(probe.kind).toBe('stream.ack');
    expect(c.messages.slice(after).filter((m) => m.market === 'BTC-PERP')).toEqual([]);
    c.ws.close();
  });

  it('answers every bad input with stream.error, its code and the id', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const cases: Array<[unknown, string, unknown]> = [
      ['not json', 'bad_request', null],
      [{ op: 'dance', id: 'a1' }, 'bad_request', 'a1'],
      [{ op: 'subscribe', id: 'a2', kinds: ['trades'] }, 'bad_request', 'a2'],
      [{ op: 'subscribe', id: 'a3', markets: ['NOPE-PERP'] }, 'unknown_market', 'a3'],
      [{ op: 'subscribe', id: 'a4', party: [alice.id] }, 'unauthorized', 'a4'],
      [{ op: 'subscribe', id: 'a5', party: [bob.id], ...streamProof(alice) }, 'forbidden', 'a5'],
      [{ op: 'subscribe', id: 'a6', markets: Array.from({ length: 101 }, (_, i) => `M-${i}`) }, 'too_many_subscriptions', 'a6'],
      [{ op: 'subscribe', id: 'a7', depth: 5 }, 'bad_request', 'a7'],
      [{ op: 'unsubscribe', id: 'a8', markets: ['BTC-PERP'] }, 'bad_request', 'a8'],
      [{ op: 'subscribe', id: 'a9', extra: 1 }, 'bad_request', 'a9'],
      [{ op: 'order.place', id: 'a10', body: '{"market":' }, 'bad_request', 'a10'],
    ];
    for (const [message, code, id] of cases) {
      const before = c.messages.length;
      c.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
      await c.waitFor((ms) => ms.slice(before).some((m) => m.kind === 'stream.error'));
      const error = c.messages.slice(before).find((m) => m.kind === 'stream.error') as Msg & { id: unknown };
      expect([error.id, error.payload.code], JSON.stringify(message).slice(0, 80)).toEqual([id, code]);
      expect(error.payload.error).toEqual(expect.any(String));
    }
    // Too large: answered (not read), the id as far as it can be read.
    const before = c.messages.length;
    c.ws.send(JSON.stringify({ id: 'big', op: 'subscribe', kinds: [], pad: 'x'.repeat(70_000) })); // over the 64 KiB default
    await c.waitFor((ms) => ms.slice(before).some((m) => m.kind === 'stream.error'));
    expect(c.messages.slice(before).find((m) => m.kind === 'stream.error')).toMatchObject({ id: 'big', payload: { code: 'payload_too_large', status: 413 } });
    expect(c.schemaErrors).toEqual([]);
    // The connection is still there and its filters unchanged.
    const ok = await ask(c, { op: 'subscribe', id: 'fine', kinds: ['candle.close'] });
    expect(ok.payload.kinds).toEqual(['trade', 'candle.close']);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/bff_ws_client_messages_total\{op="subscribe",answer="unknown_market"\} 1\b/);
    expect(metrics).toMatch(/bff_ws_client_messages_total\{op="invalid",answer="bad_request"\} 2\b/);
    c.ws.close();
  });

  it('a proven party subscribed by message gets its user channel and its snapshot', { timeout: 30_000 }, async () => {
    const resting = await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '50000' });
    expect(resting.body).toMatchObject({ ok: true, status: 'open' });
    const c = await connect(gw.url, 'kinds=trade');
    const ack = await ask(c, { op: 'subscribe', id: 'u1', kinds: ['order.update'], party: [alice.id], ...streamProof(alice) });
    expect(ack.payload).toMatchObject({ kinds: ['trade', 'order.update'], parties: [alice.id] });
    await c.waitFor((ms) => ms.some((m) => m.kind === 'order.update' && m.snapshot === true && m.payload.orderId === resting.body.orderId));
    // The same proof a second time: a replay.
    c.ws.close();
  });

  it('subscribing to trade sends the last trades of the markets added, marked as snapshot', { timeout: 30_000 }, async () => {
    expect((await bob.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'limit', size: '1', price: '150' })).body).toMatchObject({ ok: true });
    expect((await alice.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'market', size: '1' })).body).toMatchObject({ ok: true, status: 'filled' });
    const c = await connect(gw.url, 'kinds=candle.close&markets=ETH-PERP');
    await waitFor(() => (gw.deps.live as LiveRuntime).status().connected, 5_000, 'bridge');
    const ack = await ask(c, { op: 'subscribe', id: 't1', kinds: ['trade'], markets: ['SOL-PERP'] });
    expect(ack.payload).toMatchObject({ kinds: ['candle.close', 'trade'], markets: ['ETH-PERP', 'SOL-PERP'] });
    await c.waitFor((ms) => ms.some((m) => m.kind === 'trade' && m.market === 'SOL-PERP' && m.snapshot === true));
    expect(c.messages.findIndex((m) => m.kind === 'trade')).toBeGreaterThan(c.messages.indexOf(ack));
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('places and cancels an order over the socket with the engine\'s answer', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const body = orderBody({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '49000', clientOrderId: 'sock-1' });
    const placed = await ask(c, { op: 'order.place', id: 'p1', body, ...signature(alice, 'POST', '/v1/orders', body) });
    expect(placed).toMatchObject({ kind: 'stream.answer', id: 'p1', op: 'order.place', payload: { status: 200, body: { ok: true, status: 'open' } } });
    const orderId = (placed.payload.body as { orderId: string }).orderId;
    const path = `/v1/orders/${encodeURIComponent(orderId)}`;
    const cancelled = await ask(c, { op: 'order.cancel', id: 'p2', orderId, ...signature(alice, 'DELETE', path, '') });
    expect(cancelled).toMatchObject({ kind: 'stream.answer', id: 'p2', payload: { status: 200, body: { ok: true } } });
    // A market order that finds nothing: the answer says why it ended at once, as REST does.
    const ioc = orderBody({ market: 'ETH-PERP', side: 'sell', type: 'market', size: '0.1' });
    const ended = await ask(c, { op: 'order.place', id: 'p3', body: ioc, ...signature(alice, 'POST', '/v1/orders', ioc) });
    expect(ended.payload.body).toMatchObject({ ok: true, status: 'cancelled', reason: 'ioc' });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('one signed request is accepted once, by REST or the socket, whichever comes first', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    // Socket first, then the same bytes over REST.
    const body = orderBody({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '48000' });
    const headers = alice.signHeaders('POST', '/v1/orders', body);
    const sig = { user: headers['x-user'], sessionId: headers['x-session-id'], sig: headers['x-session-sig'] };
    const first = await ask(c, { op: 'order.place', id: 'r1', body, ...sig });
    expect(first.payload.body).toMatchObject({ ok: true });
    // The socket's use is in the gateway's one replay memory: the same request verifies no more.
    const again = await verifySignedRequest(gw.deps.sessions, gw.deps.replays, { method: 'POST', target: '/v1/orders', body, headers: { user: sig.user!, sessionId: sig.sessionId!, sig: sig.sig! } });
    expect(again).toMatchObject({ ok: false, refusal: { message: 'signature already used (replay)' } });
    const replayed = await http(gw.url, 'POST', '/v1/orders', { body, headers });
    expect(replayed.status).toBe(401);
    expect(replayed.body.code).toBe('unauthorized');
    // REST first, then the same bytes over the socket.
    const body2 = orderBody({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '47000' });
    const headers2 = alice.signHeaders('POST', '/v1/orders', body2);
    expect((await http(gw.url, 'POST', '/v1/orders', { body: body2, headers: headers2 })).body).toMatchObject({ ok: true });
    const replayedOnSocket = await ask(c, { op: 'order.place', id: 'r2', body: body2, user: headers2['x-user'], sessionId: headers2['x-session-id'], sig: headers2['x-session-sig'] });
    expect(replayedOnSocket).toMatchObject({ kind: 'stream.error', id: 'r2', payload: { status: 401, code: 'unauthorized' } });
    c.ws.close();
  });

  it('refuses unsigned and forged orders with the REST codes', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const body = orderBody({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '46000' });
    const unsigned = await ask(c, { op: 'order.place', id: 'f1', body });
    const rest = await http(gw.url, 'POST', '/v1/orders', { body });
    expect([unsigned.payload.status, unsigned.payload.code]).toEqual([rest.status, rest.body.code]);
    expect(unsigned.payload.code).toBe('unauthorized');
    // Signed over another body: the engine refuses it, with the code REST relays.
    const forged = alice.signHeaders('POST', '/v1/orders', body, { signedBody: '{"market":"BTC-PERP"}' });
    const viaSocket = await ask(c, { op: 'order.place', id: 'f2', body, user: forged['x-user'], sessionId: forged['x-session-id'], sig: forged['x-session-sig'] });
    const forgedRest = alice.signHeaders('POST', '/v1/orders', body, { signedBody: '{"market":"ETH-PERP"}' });
    const viaRest = await http(gw.url, 'POST', '/v1/orders', { body, headers: forgedRest });
    expect(viaSocket).toMatchObject({ kind: 'stream.error', id: 'f2' });
    expect([viaSocket.payload.status, viaSocket.payload.code]).toEqual([viaRest.status, viaRest.body.code]);
    c.ws.close();
  });

  it('REST and the socket spend one party budget', { timeout: 30_000 }, async () => {
    const carol = new SigningClient(gw.url, makeParty('carol'));
    expect((await carol.authorize()).body).toMatchObject({ ok: true });
    await waitFor(() => gw.deps.sessions.peek(carol.sessionId) !== undefined, 5_000, 'session learnt');
    const c = await connect(gw.url, 'kinds=trade');
    // RATE_LIMIT_MAX=12: six cancels over REST and six over the socket pass, the thirteenth is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await carol.cancel(`nope-${i}`)).status);
    for (let i = 0; i < 6; i++) {
      const path = `/v1/orders/nope-s${i}`;
      const a = await ask(c, { op: 'order.cancel', id: `b${i}`, orderId: `nope-s${i}`, ...signature(carol, 'DELETE', path, '') });
      statuses.push(a.kind === 'stream.answer' ? (a.payload.status as number) : (a.payload.status as number));
    }
    expect(statuses.every((s) => s !== 429)).toBe(true);
    const over = await ask(c, { op: 'order.cancel', id: 'b-over', orderId: 'nope-x', ...signature(carol, 'DELETE', '/v1/orders/nope-x', '') });
    expect(over).toMatchObject({ kind: 'stream.error', payload: { code: 'rate_limited', status: 429 } });
    expect((await carol.cancel('nope-y')).status).toBe(429);
    c.ws.close();
  });
});
