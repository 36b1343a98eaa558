// User channels against the reference engine, three parties trading: Alice's proven connection
// gets order.update for each change of her orders (partial fill, reasons user/ioc, rejection with
// the engine's code), fill frames of her own legs only, engine.order_filled only for matches she is
// in, and on a new connection the open orders and last fills as snapshot frames.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { faucet, fundedClient, makeParty, signHex, SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, type TestClient } from '../../integration/stream/helpers.js';

describe('user channels (reference engine, three parties)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: SigningClient;
  let bob: SigningClient;
  let carol: SigningClient;

  const proof = (c: SigningClient) => {
    const ts = Date.now();
    return `user=${encodeURIComponent(c.id)}&sessionId=${encodeURIComponent(c.sessionId)}&sig=${ts}.${signHex(c.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}`;
  };

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine);
    alice = new SigningClient(engine.url, makeParty('alice'));
    bob = new SigningClient(engine.url, makeParty('bob'));
    carol = new SigningClient(engine.url, makeParty('carol'));
    for (const c of [alice, bob, carol]) {
      expect((await c.authorize()).body).toMatchObject({ ok: true });
      expect((await faucet(engine.url, engine.adminToken, c.id, '1000000')).body).toMatchObject({ ok: true });
    }
    await waitFor(() => gw.deps.sessions.size >= 3, 5_000, 'sessions learnt');
  });

  it('order.update and fill frames carry Alice\'s own orders and legs only', { timeout: 60_000 }, async () => {
    const mine: TestClient = await connect(gw.url, `party=${alice.id}&kinds=order.update,fill,engine.order_filled&${proof(alice)}`);
    const place = async (c: SigningClient, body: Record<string, unknown>) => (await c.placeOrder(body)).body as { ok: boolean; orderId: string; status: string; code?: string };

    const bobAsk = await place(bob, { market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '60000' });
    await place(carol, { market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.02', price: '60010' });
    // Alice buys 0.02: 0.01 from Bob at 60000, 0.01 from Carol at 60010; she is then filled.
    const taker = await place(alice, { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.02', price: '60010' });
    expect(taker).toMatchObject({ ok: true, status: 'filled' });
    // Bob and Carol trade without Alice.
    await place(bob, { market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01' });
    // Alice rests a bid, Bob fills half of it, Alice cancels the rest.
    const bid = await place(alice, { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.04', price: '59000' });
    await place(bob, { market: 'BTC-PERP', side: 'sell', type: 'market', size: '0.02' });
    expect((await alice.cancel(bid.orderId)).body).toMatchObject({ ok: true });
    // A market sell finding no bid: cancelled, reason ioc. A size off the grid: rejected.
    const noLiquidity = await place(alice, { market: 'ETH-PERP', side: 'sell', type: 'market', size: '0.1' });
    const rejected = await place(alice, { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.00001', price: '50000', clientOrderId: 'bad-1' });
    expect(rejected).toMatchObject({ ok: false, code: 'invalid_size' });

    await mine.waitFor((m) => m.some((x) => x.kind === 'order.update' && x.payload.status === 'rejected'));
    const updates = mine.frames().filter((f) => f.kind === 'order.update');
    const byOrder = (id: string) => updates.filter((u) => u.payload.orderId === id).map((u) => [u.payload.status, u.payload.filledSize, u.payload.avgPrice, u.payload.reason]);
    expect(byOrder(taker.orderId)).toEqual([
      ['open', '0.0000000000', null, null],
      ['partially_filled', '0.0100000000', '60000.0000000000', null],
      ['filled', '0.0200000000', '60005.0000000000', null],
    ]);
    expect(byOrder(bid.orderId)).toEqual([
      ['open', '0.0000000000', null, null],
      ['partially_filled', '0.0200000000', '59000.0000000000', null],
      ['cancelled', '0.0200000000', '59000.0000000000', 'user'],
    ]);
    expect(byOrder(noLiquidity.orderId).at(-1)).toEqual(['cancelled', '0.0000000000', null, 'ioc']);
    expect(updates.at(-1)!.payload).toMatchObject({ orderId: null, clientOrderId: 'bad-1', status: 'rejected', reason: 'rejected', code: 'invalid_size' });

    const fills = mine.frames().filter((f) => f.kind === 'fill');
    expect(fills.map((f) => [f.payload.orderId, f.payload.role, f.payload.price, f.payload.size])).toEqual([
      [taker.orderId, 'taker', '60000.0000000000', '0.0100000000'],
      [taker.orderId, 'taker', '60010.0000000000', '0.0100000000'],
      [bid.orderId, 'maker', '59000.0000000000', '0.0200000000'],
    ]);
    expect(fills[0]!.payload.fee).toBe('0.3000000000'); // taker fee 0.0005 × 600
    // Nothing of Bob's or Carol's: every user frame is Alice's, every engine fill has an Alice leg.
    expect(mine.frames().filter((f) => f.kind !== 'engine.order_filled').every((f) => f.userParty === alice.id)).toBe(true);
    const engineFills = mine.frames().filter((f) => f.kind === 'engine.order_filled');
    expect(engineFills).toHaveLength(3);
    expect(engineFills.every((f) => f.payload.legs.some((l: { party: string }) => l.party === alice.id))).toBe(true);
    expect(updates.some((u) => u.payload.orderId === bobAsk.orderId)).toBe(false);
    expect(mine.schemaErrors).toEqual([]);
    mine.ws.close();

    // A new connection: Alice's open orders and last fills first, marked as snapshot.
    const open = await place(alice, { market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.1', price: '3000' });
    const again = await connect(gw.url, `party=${alice.id}&kinds=order.update,fill&${proof(alice)}`);
    await again.waitFor((m) => m.filter((x) => x.snapshot).length >= 4);
    const snap = again.frames().filter((f) => f.snapshot);
    expect(snap.filter((f) => f.kind === 'order.update').map((f) => [f.payload.orderId, f.payload.status])).toEqual([[open.orderId, 'open']]);
    expect(snap.filter((f) => f.kind === 'fill')).toHaveLength(3);
    expect(again.schemaErrors).toEqual([]);
    again.ws.close();
  });

  it('the place-order answer through the gateway says why an order ended at once', { timeout: 30_000 }, async () => {
    const dave = await fundedClient(gw.url, engine.adminToken, '1000000', 'dave', engine.url);
    // SOL-PERP has no resting order: a market order finds no liquidity.
    const answer = (await dave.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'market', size: '1' })).body;
    expect(answer).toMatchObject({ ok: true, status: 'cancelled', filledSize: '0.0000000000', reason: 'ioc' });
    // An order that rests is relayed as the engine sent it (no reason).
    const rests = (await dave.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'limit', size: '1', price: '100' })).body;
    expect(rests).toMatchObject({ ok: true, status: 'open' });
    expect(rests).not.toHaveProperty('reason');
  });
});
