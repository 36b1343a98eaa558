import { expectCanonicalEvents } from './canonical-events.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/server.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import type { EngineEvent } from '../../../sandbox/engine/types.js';
import { fundedClient, type SigningClient } from './helpers.js';

let eng: RunningEngine;
const file = fileScope();
beforeAll(async () => {
  eng = await testEngine(file);
});
const client = (): Promise<SigningClient> => fundedClient(eng.url, eng.adminToken, '1000000', 't');
const limit = (market: string, side: string, size: string, price: string, extra: Record<string, unknown> = {}) => ({ market, side, type: 'limit', size, price, ...extra });
const after = (seq: number): EngineEvent[] => eng.engine.log.eventsSince(seq);

describe('triggers', () => {
  it('/v1/tpsl: a long TP fires at the crossing trade, closes the position and cancels the SL', async () => {
    const [a, mk, c, dd, e] = await Promise.all([client(), client(), client(), client(), client()]);
    await mk.placeOrder(limit('BTC-PERP', 'sell', '0.5', '60000'));
    await a.placeOrder(limit('BTC-PERP', 'buy', '0.5', '60000')); // a long 0.5 @ 60000
    const set = await a.tpsl({ market: 'BTC-PERP', tp: { triggerPrice: '61000' }, sl: { triggerPrice: '59000', limitPrice: '58900' } });
    expect(set.body).toEqual({ ok: true, triggers: [expect.objectContaining({ kind: 'tp', status: 'armed' }), expect.objectContaining({ kind: 'sl', status: 'armed' })] });
    const [tpId, slId] = set.body.triggers.map((t: any) => t.triggerId);
    const me = await a.me();
    expect(me.body.triggers).toEqual([
      { triggerId: tpId, party: a.id, market: 'BTC-PERP', kind: 'tp', status: 'armed', triggerPrice: '61000.0000000000', limitPrice: null, size: null, firedSize: null, firedLimit: null, positionId: me.body.positions[0].positionId },
      { triggerId: slId, party: a.id, market: 'BTC-PERP', kind: 'sl', status: 'armed', triggerPrice: '59000.0000000000', limitPrice: '58900.0000000000', size: null, firedSize: null, firedLimit: null, positionId: me.body.positions[0].positionId },
    ]);
    await e.placeOrder(limit('BTC-PERP', 'buy', '0.5', '60900')); // liquidity the TP will hit
    await c.placeOrder(limit('BTC-PERP', 'sell', '0.1', '61000'));
    const mark = eng.engine.log.maxSeq;
    await dd.placeOrder(limit('BTC-PERP', 'buy', '0.1', '61000')); // trade at 61000 → TP
    const ev = after(mark);
    expect(ev.map((x) => x.kind)).toEqual([
      'inbound.order',
      'engine.order_placed',
      'engine.order_filled',
      'engine.trigger_fired',
      'engine.order_placed',
      'engine.order_filled',
      'engine.trigger_cancelled',
    ]);
    const fired = ev[3]!;
    expect(fired).toMatchObject({ market: 'BTC-PERP', party: a.id, payload: { triggerId: tpId, firedSize: '0.5000000000', firedLimit: null } });
    const order = ev[4]!.payload.order as any;
    expect(order).toMatchObject({ orderId: fired.payload.orderId, party: a.id, side: 'sell', type: 'market', tif: 'ioc', price: null, size: '0.5000000000', reduceOnly: true });
    const legs = ev[5]!.payload.legs as any[];
    // closes at the bid 60900: PnL (60900 − 60000) × 0.5 = 450; fee 0.0005 × 30450 = 15.225
    expect(legs[0]).toMatchObject({ party: a.id, role: 'taker', size: '0.5000000000', positionSize: '0.0000000000', realizedPnl: '450.0000000000', fee: '15.2250000000' });
    expect(ev[6]).toMatchObject({ party: a.id, payload: { triggerId: slId } });
    expect((await a.me()).body).toMatchObject({ positions: [], triggers: [] });
  });

  it('replaces and cancels /v1/tpsl legs with null', async () => {
    const [a, mk] = await Promise.all([client(), client()]);
    await mk.placeOrder(limit('ETH-PERP', 'buy', '1', '3000'));
    await a.placeOrder(limit('ETH-PERP', 'sell', '1', '3000')); // a short 1
    const one = await a.tpsl({ market: 'ETH-PERP', tp: { triggerPrice: '2800', size: '0.5' } });
    const two = await a.tpsl({ market: 'ETH-PERP', tp: { triggerPrice: '2700' } });
    expect(two.body.triggers).toEqual([
      { triggerId: one.body.triggers[0].triggerId, kind: 'tp', status: 'cancelled' },
      { triggerId: expect.any(String), kind: 'tp', status: 'armed' },
    ]);
    const three = await a.tpsl({ market: 'ETH-PERP', tp: null });
    expect(three.body.triggers).toEqual([{ triggerId: two.body.triggers[1].triggerId, kind: 'tp', status: 'cancelled' }]);
    expect((await a.tpsl({ market: 'ETH-PERP', sl: { triggerPrice: '3100', size: '0.0001' } })).body.code).toBe('invalid_size');
  });

  it('attached tp/sl: armed when the parent fills; the SL fires a reduce-only limit at its limit price', async () => {
    const [a, mk, x, y] = await Promise.all([client(), client(), client(), client()]);
    const parent = await a.placeOrder(limit('SOL-PERP', 'buy', '10', '100', { tp: { triggerPrice: '120' }, sl: { triggerPrice: '90', limitPrice: '89' } }));
    expect(parent.body.status).toBe('open');
    let mark = eng.engine.log.maxSeq;
    await mk.placeOrder(limit('SOL-PERP', 'sell', '4', '100')); // partial fill arms both legs
    let ev = after(mark);
    expect(ev.map((e) => e.kind)).toEqual(['inbound.order', 'engine.order_placed', 'engine.order_filled', 'engine.trigger_set', 'engine.attached_resolved', 'engine.trigger_set', 'engine.attached_resolved']);
    const tp = ev[3]!.payload.trigger as any;
    expect(tp).toMatchObject({ party: a.id, kind: 'tp', status: 'armed', triggerPrice: '120.0000000000', limitPrice: null, size: '10.0000000000' });
    expect(ev[4]!.payload).toEqual({ orderId: parent.body.orderId, triggerId: tp.triggerId, outcome: 'armed' });
    const sl = ev[5]!.payload.trigger as any;
    const placed = after(0).find((e) => e.kind === 'engine.order_placed' && (e.payload.order as any).orderId === parent.body.orderId)!;
    expect((placed.payload.order as any).tp).toEqual({ triggerPrice: '120.0000000000', limitPrice: null, size: '10.0000000000' });
    expect((placed.payload.order as any).sl).toEqual({ triggerPrice: '90.0000000000', limitPrice: '89.0000000000', size: '10.0000000000' });
    await a.cancel(parent.body.orderId); // a long 4; rest of the parent cancelled (already resolved)

    await x.placeOrder(limit('SOL-PERP', 'buy', '1', '90'));
    mark = eng.engine.log.maxSeq;
    await y.placeOrder(limit('SOL-PERP', 'sell', '1', '90')); // trade at 90 → SL
    ev = after(mark);
    const firedIdx = ev.findIndex((e) => e.kind === 'engine.trigger_fired');
    expect(ev[firedIdx]!.payload).toEqual({ triggerId: sl.triggerId, orderId: expect.any(String), firedSize: '4.0000000000', firedLimit: '89.0000000000' });
    const slOrder = ev[firedIdx + 1]!.payload.order as any;
    expect(slOrder).toMatchObject({ orderId: ev[firedIdx]!.payload.orderId, side: 'sell', type: 'limit', tif: 'gtc', price: '89.0000000000', size: '4.0000000000', reduceOnly: true, status: 'open' });
    const me = await a.me();
    expect(me.body.triggers.map((t: any) => t.kind)).toEqual(['tp']);
    expect(me.body.openOrders.map((o: any) => o.orderId)).toEqual([slOrder.orderId]);
    expect(eng.engine.triggers.get(sl.triggerId)).toMatchObject({ status: 'fired', firedSize: 40_000_000_000n, firedLimit: 890_000_000_000n });
  });

  it('attached legs are abandoned when the parent is cancelled unfilled', async () => {
    const a = await client();
    const parent = await a.placeOrder(limit('SOL-PERP', 'buy', '1', '50', { tp: { triggerPrice: '60' } }));
    const mark = eng.engine.log.maxSeq;
    await a.cancel(parent.body.orderId);
    const ev = after(mark);
    expect(ev.map((e) => e.kind)).toEqual(['engine.order_cancelled', 'engine.attached_resolved']);
    expect(ev[1]!.payload).toEqual({ orderId: parent.body.orderId, triggerId: expect.any(String), outcome: 'abandoned' });
  });

  it('a short SL fires when the price rises to the trigger', async () => {
    const [a, mk, x, y, liq] = await Promise.all([client(), client(), client(), client(), client()]);
    await mk.placeOrder(limit('ETH-PERP', 'buy', '1', '2000'));
    await a.placeOrder(limit('ETH-PERP', 'sell', '1', '2000')); // short 1 @ 2000
    await a.tpsl({ market: 'ETH-PERP', sl: { triggerPrice: '2100' } });
    await liq.placeOrder(limit('ETH-PERP', 'sell', '1', '2150'));
    await x.placeOrder(limit('ETH-PERP', 'sell', '0.1', '2100'));
    const mark = eng.engine.log.maxSeq;
    await y.placeOrder(limit('ETH-PERP', 'buy', '0.1', '2100'));
    const fill = after(mark).filter((e) => e.kind === 'engine.order_filled')[1]!;
    expect((fill.payload.legs as any[])[0]).toMatchObject({ party: a.id, side: 'buy', price: '2150.0000000000', positionSize: '0.0000000000', realizedPnl: '-150.0000000000' });
  });
});

describe('event encoding', () => {
  it('builds every event with sorted keys, so its JSON is already canonical', () => {
    expectCanonicalEvents(eng.engine.log.eventsSince(0));
  });
});
