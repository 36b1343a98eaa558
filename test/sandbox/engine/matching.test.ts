import { expectCanonicalEvents } from './canonical-events.js';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/server.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import type { EngineEvent } from '../../../sandbox/engine/types.js';
import { fundedClient, http, type SigningClient } from './helpers.js';

let eng: RunningEngine;
let mark = 0;
const since = (): EngineEvent[] => eng.engine.log.eventsSince(mark);
const fills = (): EngineEvent[] => since().filter((e) => e.kind === 'engine.order_filled');

const file = fileScope();
beforeAll(async () => {
  eng = await testEngine(file);
});
beforeEach(() => {
  mark = eng.engine.log.maxSeq;
});

const client = (amount = '100000', hint = 'm'): Promise<SigningClient> => fundedClient(eng.url, eng.adminToken, amount, hint);
const limit = (market: string, side: string, size: string, price: string, extra: Record<string, unknown> = {}) => ({ market, side, type: 'limit', size, price, ...extra });

describe('price-time priority and partial fills', () => {
  it('fills the best price first, then in time order, and reports partial state', async () => {
    const [c, dd, e, t] = await Promise.all([client(), client(), client(), client()]);
    const oc = await c.placeOrder(limit('ETH-PERP', 'sell', '1', '3000'));
    const od = await dd.placeOrder(limit('ETH-PERP', 'sell', '1', '3000'));
    const oe = await e.placeOrder(limit('ETH-PERP', 'sell', '1', '2999'));
    expect(oc.body).toMatchObject({ ok: true, status: 'open', filledSize: '0.0000000000', avgPrice: null });
    mark = eng.engine.log.maxSeq;
    const r = await t.placeOrder(limit('ETH-PERP', 'buy', '2.5', '3000'));
    expect(r.body).toEqual({ ok: true, orderId: r.body.orderId, status: 'filled', filledSize: '2.5000000000', avgPrice: '2999.6000000000' });
    const f = fills();
    expect(f.map((x) => [x.payload.makerOrderId, x.payload.price, x.payload.size])).toEqual([
      [oe.body.orderId, '2999.0000000000', '1.0000000000'],
      [oc.body.orderId, '3000.0000000000', '1.0000000000'],
      [od.body.orderId, '3000.0000000000', '0.5000000000'],
    ]);
    expect(since()[0]!.kind).toBe('inbound.order');
    expect(since()[1]).toMatchObject({ kind: 'engine.order_placed', market: 'ETH-PERP', party: t.id });
    const admin = await http(eng.url, 'GET', `/v1/admin/users/${dd.id}/orders?market=ETH-PERP`, { headers: { authorization: `Bearer ${eng.adminToken}` } });
    expect(admin.body.orders).toHaveLength(1);
    expect(admin.body.orders[0]).toMatchObject({ orderId: od.body.orderId, status: 'partially_filled', filledSize: '0.5000000000', avgPrice: '3000.0000000000', seq: f[2]!.seq });
    const book = await http(eng.url, 'GET', '/v1/orderbook?market=ETH-PERP&depth=5');
    expect(book.body).toEqual({ market: 'ETH-PERP', seq: f[2]!.seq, depth: 5, bids: [], asks: [['3000.0000000000', '0.5000000000']] });
    // clean up the remaining ask
    expect((await dd.cancel(od.body.orderId)).body).toEqual({ ok: true, orderId: od.body.orderId, status: 'cancelled' });
  });

  it('ioc cancels the unfilled remainder; alo rests or is rejected when it would cross', async () => {
    const [m, t] = await Promise.all([client(), client()]);
    await m.placeOrder(limit('SOL-PERP', 'sell', '1', '150'));
    mark = eng.engine.log.maxSeq;
    const r = await t.placeOrder(limit('SOL-PERP', 'buy', '3', '150', { tif: 'ioc' }));
    expect(r.body).toMatchObject({ ok: true, status: 'cancelled', filledSize: '1.0000000000', avgPrice: '150.0000000000' });
    const kinds = since().map((e) => e.kind);
    expect(kinds).toEqual(['inbound.order', 'engine.order_placed', 'engine.order_filled', 'engine.order_cancelled']);
    expect(since()[3]!.payload).toEqual({ orderId: r.body.orderId, reason: 'ioc' });

    await m.placeOrder(limit('SOL-PERP', 'sell', '1', '151'));
    mark = eng.engine.log.maxSeq;
    const cross = await t.placeOrder(limit('SOL-PERP', 'buy', '1', '151', { tif: 'alo', clientOrderId: 'alo-1' }));
    expect(cross.body).toEqual({ ok: false, code: 'post_only_would_cross', error: expect.any(String) });
    expect(since().map((e) => e.kind)).toEqual(['inbound.order', 'engine.order_rejected']);
    expect(since()[1]!.payload).toMatchObject({ clientOrderId: 'alo-1', code: 'post_only_would_cross' });
    const rest = await t.placeOrder(limit('SOL-PERP', 'buy', '1', '150.5', { tif: 'alo' }));
    expect(rest.body).toMatchObject({ ok: true, status: 'open' });
    await t.cancel(rest.body.orderId);
  });

  it('market orders sweep up to the worst price and cancel the rest', async () => {
    const [m, t] = await Promise.all([client(), client()]);
    await m.placeOrder(limit('SOL-PERP', 'buy', '1', '140'));
    await m.placeOrder(limit('SOL-PERP', 'buy', '1', '139'));
    const r = await t.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'market', size: '3', price: '139.5' });
    expect(r.body).toMatchObject({ ok: true, status: 'cancelled', filledSize: '1.0000000000', avgPrice: '140.0000000000' });
    const r2 = await t.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'market', size: '1' });
    expect(r2.body).toMatchObject({ ok: true, status: 'filled', avgPrice: '139.0000000000' });
  });
});

describe('positions, flips, PnL and fees', () => {
  it('computes every leg exactly through open, flip, increase and a close landing on zero', async () => {
    const [a, b, c, dd] = await Promise.all([client('100000', 'a'), client('100000', 'b'), client('100000', 'c'), client('100000', 'd')]);
    // 1. b rests a sell, a lifts it: a long 0.5 @ 60000 (taker fee 15), b short 0.5 (maker fee 0).
    const s1 = await b.placeOrder(limit('BTC-PERP', 'sell', '0.5', '60000'));
    mark = eng.engine.log.maxSeq;
    const o1 = await a.placeOrder(limit('BTC-PERP', 'buy', '0.5', '60000'));
    let f = fills();
    expect(f).toHaveLength(1);
    const legs1 = f[0]!.payload.legs as any[];
    expect(f[0]!.payload).toMatchObject({ price: '60000.0000000000', size: '0.5000000000', takerSide: 'buy', takerOrderId: o1.body.orderId, makerOrderId: s1.body.orderId });
    expect(f[0]!.party).toBeUndefined();
    expect(legs1).toEqual([
      { party: a.id, orderId: o1.body.orderId, role: 'taker', side: 'buy', size: '0.5000000000', price: '60000.0000000000', fee: '15.0000000000', positionId: legs1[0].positionId, positionSize: '0.5000000000', entryPrice: '60000.0000000000', realizedPnl: '0.0000000000', newBalance: '99985.0000000000' },
      { party: b.id, orderId: s1.body.orderId, role: 'maker', side: 'sell', size: '0.5000000000', price: '60000.0000000000', fee: '0.0000000000', positionId: legs1[1].positionId, positionSize: '-0.5000000000', entryPrice: '60000.0000000000', realizedPnl: '0.0000000000', newBalance: '100000.0000000000' },
    ]);
    const aPos1 = legs1[0].positionId as string;
    const bPos1 = legs1[1].positionId as string;

    // 2. Flip both: b bids 0.8 @ 62000 (short 0.5 → long 0.3), a sells 0.8 into it (long 0.5 → short 0.3).
    const b2 = await b.placeOrder(limit('BTC-PERP', 'buy', '0.8', '62000'));
    mark = eng.engine.log.maxSeq;
    const a2 = await a.placeOrder(limit('BTC-PERP', 'sell', '0.8', '62000'));
    f = fills();
    expect(f).toHaveLength(1);
    const legs2 = f[0]!.payload.legs as any[];
    expect(legs2).toHaveLength(4);
    expect(legs2[0]).toEqual({ party: a.id, orderId: a2.body.orderId, role: 'taker', side: 'sell', size: '0.5000000000', price: '62000.0000000000', fee: '15.5000000000', positionId: aPos1, positionSize: '0.0000000000', entryPrice: '60000.0000000000', realizedPnl: '1000.0000000000', newBalance: '100969.5000000000' });
    expect(legs2[1]).toEqual({ party: a.id, orderId: a2.body.orderId, role: 'taker', side: 'sell', size: '0.3000000000', price: '62000.0000000000', fee: '9.3000000000', positionId: legs2[1].positionId, positionSize: '-0.3000000000', entryPrice: '62000.0000000000', realizedPnl: '0.0000000000', newBalance: '100960.2000000000' });
    expect(legs2[1].positionId).not.toBe(aPos1);
    expect(legs2[2]).toEqual({ party: b.id, orderId: b2.body.orderId, role: 'maker', side: 'buy', size: '0.5000000000', price: '62000.0000000000', fee: '0.0000000000', positionId: bPos1, positionSize: '0.0000000000', entryPrice: '60000.0000000000', realizedPnl: '-1000.0000000000', newBalance: '99000.0000000000' });
    expect(legs2[3]).toMatchObject({ party: b.id, role: 'maker', size: '0.3000000000', positionSize: '0.3000000000', entryPrice: '62000.0000000000', realizedPnl: '0.0000000000', newBalance: '99000.0000000000' });
    expect(legs2[3].positionId).not.toBe(bPos1);
    const aPos2 = legs2[1].positionId as string;

    // 3. Increase the short: c bids 0.1 @ 61000, a sells into it → entry (18600 + 6100) / 0.4 = 61750.
    await c.placeOrder(limit('BTC-PERP', 'buy', '0.1', '61000'));
    mark = eng.engine.log.maxSeq;
    await a.placeOrder(limit('BTC-PERP', 'sell', '0.1', '61000'));
    const legs3 = fills()[0]!.payload.legs as any[];
    expect(legs3[0]).toMatchObject({ party: a.id, fee: '3.0500000000', positionId: aPos2, positionSize: '-0.4000000000', entryPrice: '61750.0000000000', realizedPnl: '0.0000000000', newBalance: '100957.1500000000' });

    // 4. Close exactly to zero: d offers 0.4 @ 61000, a buys it: PnL (61750 − 61000) × 0.4 = 300, fee 12.2.
    await dd.placeOrder(limit('BTC-PERP', 'sell', '0.4', '61000'));
    mark = eng.engine.log.maxSeq;
    await a.placeOrder(limit('BTC-PERP', 'buy', '0.4', '61000'));
    const legs4 = fills()[0]!.payload.legs as any[];
    expect(legs4).toHaveLength(2); // one leg for a (no new epoch), one for d
    expect(legs4[0]).toEqual({ party: a.id, orderId: legs4[0].orderId, role: 'taker', side: 'buy', size: '0.4000000000', price: '61000.0000000000', fee: '12.2000000000', positionId: aPos2, positionSize: '0.0000000000', entryPrice: '61750.0000000000', realizedPnl: '300.0000000000', newBalance: '101244.9500000000' });
    const me = await a.me();
    expect(me.body).toMatchObject({ ok: true, party: a.id, balance: '101244.9500000000', positions: [], openOrders: [], triggers: [] });
    const bMe = await b.me();
    expect(bMe.body.positions).toEqual([
      expect.objectContaining({ positionId: legs2[3].positionId, party: b.id, market: 'BTC-PERP', size: '0.3000000000', entryPrice: '62000.0000000000', realizedPnl: '0.0000000000', status: 'open', closedAt: null }),
    ]);
  });

  it('lists a self-trade as separate taker and maker legs', async () => {
    const s = await client();
    const m = await s.placeOrder(limit('ETH-PERP', 'sell', '1', '2500'));
    mark = eng.engine.log.maxSeq;
    const t = await s.placeOrder(limit('ETH-PERP', 'buy', '1', '2500'));
    const legs = fills()[0]!.payload.legs as any[];
    expect(legs.map((l) => [l.party, l.orderId, l.role, l.side, l.positionSize, l.fee, l.newBalance])).toEqual([
      [s.id, t.body.orderId, 'taker', 'buy', '1.0000000000', '1.2500000000', '99998.7500000000'],
      [s.id, m.body.orderId, 'maker', 'sell', '0.0000000000', '0.0000000000', '99998.7500000000'],
    ]);
  });
});

describe('reduce-only', () => {
  it('rejects opening or increasing, accepts reducing, and cancels a resting one when the position is gone', async () => {
    const [p, q] = await Promise.all([client(), client()]);
    const r0 = await p.placeOrder(limit('SOL-PERP', 'sell', '1', '100', { reduceOnly: true }));
    expect(r0.body).toMatchObject({ ok: false, code: 'reduce_only_violation' });
    await q.placeOrder(limit('SOL-PERP', 'sell', '2', '100'));
    await p.placeOrder(limit('SOL-PERP', 'buy', '2', '100')); // p long 2
    expect((await p.placeOrder(limit('SOL-PERP', 'buy', '1', '90', { reduceOnly: true }))).body.code).toBe('reduce_only_violation');
    expect((await p.placeOrder(limit('SOL-PERP', 'sell', '3', '120', { reduceOnly: true }))).body.code).toBe('reduce_only_violation');
    const ro = await p.placeOrder(limit('SOL-PERP', 'sell', '2', '120', { reduceOnly: true }));
    expect(ro.body).toMatchObject({ ok: true, status: 'open' });
    // p closes the position with a normal order instead; the resting reduce-only order is cancelled.
    await q.placeOrder(limit('SOL-PERP', 'buy', '2', '100'));
    mark = eng.engine.log.maxSeq;
    await p.placeOrder(limit('SOL-PERP', 'sell', '2', '100'));
    const cancelled = since().find((e) => e.kind === 'engine.order_cancelled');
    expect(cancelled?.payload).toEqual({ orderId: ro.body.orderId, reason: 'reduce_only' });
  });
});

describe('rejection codes', () => {
  it('answers every order rejection with HTTP 200 and an engine.order_rejected event', async () => {
    const [p, poor] = await Promise.all([client(), client('100')]);
    const cases: Array<[Record<string, unknown>, string, SigningClient?]> = [
      [limit('btc-perp', 'buy', '0.1', '60000'), 'market_unsupported'],
      [limit('all', 'buy', '0.1', '60000'), 'market_unsupported'],
      [limit('BTC-PERP', 'buy', '0.00001', '60000'), 'invalid_size'],
      [limit('BTC-PERP', 'buy', '0.1e1', '60000'), 'invalid_size'],
      [{ ...limit('BTC-PERP', 'buy', '0.1', '60000'), size: 0.1 }, 'invalid_size'],
      [limit('BTC-PERP', 'buy', '0', '60000'), 'invalid_size'],
      [limit('BTC-PERP', 'buy', '0.1', '60000.5'), 'invalid_price'],
      [limit('BTC-PERP', 'buy', '0.1', '1.234'), 'invalid_price'],
      [limit('BTC-PERP', 'buy', '0.1', 'NaN'), 'invalid_price'],
      [{ ...limit('BTC-PERP', 'buy', '0.1', '60000'), price: 60000 }, 'invalid_price'],
      [limit('BTC-PERP', 'buy', '0.0001', '60000'), 'below_min_notional'],
      [limit('BTC-PERP', 'buy', '0.1', '60000'), 'insufficient_margin', poor],
      [limit('BTC-PERP', 'buy', '0.1', '60000', { reduceOnly: true }), 'reduce_only_violation'],
      [limit('BTC-PERP', 'buy', '0.1', '60000', { tp: { triggerPrice: '61000.5' } }), 'invalid_price'],
    ];
    for (const [order, code, who] of cases) {
      const c = who ?? p;
      mark = eng.engine.log.maxSeq;
      const r = await c.placeOrder({ ...order, clientOrderId: `c-${code}` });
      expect(r.status, code).toBe(200);
      expect(r.body, JSON.stringify(order)).toEqual({ ok: false, code, error: expect.any(String) });
      const ev = since();
      expect(ev.map((e) => e.kind)).toEqual(['inbound.order', 'engine.order_rejected']);
      expect(ev[0]!.payload).toEqual({ clientOrderId: `c-${code}`, request: { ...order, clientOrderId: `c-${code}` } });
      expect(ev[1]).toMatchObject({ market: order.market, party: c.id, payload: { clientOrderId: `c-${code}`, code, error: r.body.error } });
    }
    // margin at 20x: 0.03 × 50000 / 20 = 75 reserved, 25 left; 0.011 × 50000 / 20 = 27.5 > 25
    const ok = await poor.placeOrder(limit('BTC-PERP', 'buy', '0.03', '50000'));
    expect(ok.body).toMatchObject({ ok: true, status: 'open' });
    expect((await poor.placeOrder(limit('BTC-PERP', 'buy', '0.011', '50000'))).body.code).toBe('insufficient_margin');
    const fits = await poor.placeOrder(limit('BTC-PERP', 'buy', '0.01', '50000'));
    expect(fits.body).toMatchObject({ ok: true, status: 'open' });
    await poor.cancel(fits.body.orderId);
    await poor.cancel(ok.body.orderId);
  });

  it('cancel: unknown_order (also another party’s order) and order_not_open', async () => {
    const [p, q] = await Promise.all([client(), client()]);
    expect((await p.cancel('o-nope')).body).toEqual({ ok: false, code: 'unknown_order', error: expect.any(String) });
    const o = await p.placeOrder(limit('ETH-PERP', 'buy', '0.1', '1000'));
    expect((await q.cancel(o.body.orderId)).body.code).toBe('unknown_order');
    mark = eng.engine.log.maxSeq;
    expect((await p.cancel(o.body.orderId)).body).toEqual({ ok: true, orderId: o.body.orderId, status: 'cancelled' });
    expect(since()).toEqual([expect.objectContaining({ kind: 'engine.order_cancelled', market: 'ETH-PERP', party: p.id, payload: { orderId: o.body.orderId, reason: 'user' } })]);
    expect((await p.cancel(o.body.orderId)).body.code).toBe('order_not_open');
  });

  it('tpsl without a position is no_position; malformed requests are 400 bad_request', async () => {
    const p = await client();
    expect((await p.tpsl({ market: 'ETH-PERP', tp: { triggerPrice: '3000' } })).body).toEqual({ ok: false, code: 'no_position', error: expect.any(String) });
    expect((await p.tpsl({ market: 'XRP-PERP', tp: { triggerPrice: '3000' } })).body.code).toBe('market_unsupported');
    mark = eng.engine.log.maxSeq;
    const bad = await p.signed('POST', '/v1/orders', '{"market":');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ ok: false, code: 'bad_request', error: 'malformed JSON' });
    const missing = await p.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '1' });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('bad_request');
    expect(since()).toEqual([]);
    const nf = await http(eng.url, 'GET', '/v1/nothing');
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ ok: false, code: 'not_found', error: expect.any(String) });
  });

  it('can send below_min_notional as 0x0C', async (ctx) => {
    const hex = await testEngine(ctx, { rejectCodeStyle: 'hex' });
    const p = await fundedClient(hex.url, hex.adminToken);
    const r = await p.placeOrder(limit('BTC-PERP', 'buy', '0.0001', '60000'));
    expect(r.body).toEqual({ ok: false, code: '0x0C', error: expect.any(String) });
    const ev = hex.engine.log.eventsSince(0).at(-1)!;
    expect(ev).toMatchObject({ kind: 'engine.order_rejected', payload: { code: '0x0C' } });
  });
});

describe('event encoding', () => {
  it('builds every event with sorted keys, so its JSON is already canonical', () => {
    expectCanonicalEvents(eng.engine.log.eventsSince(0));
  });
});
