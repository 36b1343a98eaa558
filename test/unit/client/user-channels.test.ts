// The stores of the user channels: an order update counts only when newer (by asOfSeq) than the one
// held, so a snapshot sent again on a reconnection or a stale frame behind a newer snapshot changes
// nothing; a terminal state moves the order out of the open list into the history with its reason;
// a fill leg is kept once, a flip's two legs (one order, two positions) both.
import { describe, expect, it } from 'vitest';
import { UserFillsStore, UserOrdersStore, type FillFrame, type OrderUpdateFrame } from '../../../packages/client/src/index.js';

const P = 'alice::' + 'ab'.repeat(32);
const D = (n: string) => `${n}.0000000000`;

function order(orderId: string | null, asOfSeq: number, status: OrderUpdateFrame['payload']['status'], extra: Partial<OrderUpdateFrame['payload']> = {}, snapshot = false): OrderUpdateFrame {
  return {
    kind: 'order.update',
    seq: asOfSeq,
    ts: '2026-11-25T00:00:00.000Z',
    market: 'BTC-PERP',
    userParty: P,
    ...(snapshot ? { snapshot: true as const } : {}),
    payload: { orderId, clientOrderId: null, side: 'buy', type: 'limit', price: D('60000'), size: D('2'), filledSize: D('0'), avgPrice: null, status, reason: null, code: null, error: null, asOfSeq, ...extra },
  };
}

function fill(matchId: string, orderId: string, positionId: string, seq: number): FillFrame {
  return {
    kind: 'fill',
    seq,
    ts: '2026-11-25T00:00:00.000Z',
    market: 'BTC-PERP',
    userParty: P,
    payload: { matchId, orderId, positionId, side: 'buy', role: 'maker', price: D('60000'), size: D('1'), fee: D('0'), realizedPnl: D('0') },
  };
}

describe('UserOrdersStore', () => {
  it('keeps the newest state of each order; a terminal one leaves the open list with its reason', () => {
    const s = new UserOrdersStore();
    expect(s.apply(order('o1', 10, 'open', {}, true))).toBe(true);
    expect(s.apply(order('o2', 11, 'open'))).toBe(true);
    expect(s.open().map((o) => o.orderId)).toEqual(['o2', 'o1']);
    // The same snapshot again (a reconnection) and an older frame change nothing.
    expect(s.apply(order('o1', 10, 'open', {}, true))).toBe(false);
    expect(s.apply(order('o1', 12, 'partially_filled', { filledSize: D('1'), avgPrice: D('60000') }))).toBe(true);
    expect(s.apply(order('o1', 11, 'open'))).toBe(false);
    expect(s.get('o1')).toMatchObject({ status: 'partially_filled', filledSize: D('1') });
    expect(s.apply(order('o1', 13, 'cancelled', { filledSize: D('1'), reason: 'user' }))).toBe(true);
    expect(s.open().map((o) => o.orderId)).toEqual(['o2']);
    expect(s.recent().map((o) => [o.orderId, o.status, o.reason])).toEqual([['o1', 'cancelled', 'user']]);
    // A stale open frame of the cancelled order does not bring it back.
    expect(s.apply(order('o1', 12, 'open'))).toBe(false);
    expect(s.open().map((o) => o.orderId)).toEqual(['o2']);
  });

  it('keeps rejections (no order id) in the history, and forgets the oldest ended orders past its bound', () => {
    const s = new UserOrdersStore(2);
    s.apply(order(null, 5, 'rejected', { reason: 'rejected', code: 'insufficient_margin', error: 'no margin' }));
    s.apply(order('a', 6, 'filled'));
    s.apply(order('b', 7, 'cancelled', { reason: 'ioc' }));
    expect(s.recent().map((o) => [o.orderId, o.reason])).toEqual([
      ['b', 'ioc'],
      ['a', null],
    ]);
    expect(s.get('a')?.status).toBe('filled');
    s.apply(order('c', 8, 'filled'));
    expect(s.recent().map((o) => o.orderId)).toEqual(['c', 'b']);
    expect(s.get('a')).toBeUndefined();
    s.clear();
    expect([s.open(), s.recent()]).toEqual([[], []]);
  });
});

describe('UserFillsStore', () => {
  it('keeps each leg once, newest first, a flip as two legs', () => {
    const s = new UserFillsStore(3);
    expect(s.apply(fill('m1', 'o1', 'p1', 10))).toBe(true);
    expect(s.apply(fill('m1', 'o1', 'p1', 10))).toBe(false);
    expect(s.apply(fill('m2', 'o1', 'p1', 12))).toBe(true);
    expect(s.apply(fill('m2', 'o1', 'p2', 12))).toBe(true);
    expect(s.list().map((f) => [f.seq, f.positionId])).toEqual([
      [12, 'p2'],
      [12, 'p1'],
      [10, 'p1'],
    ]);
    expect(s.apply(fill('m3', 'o2', 'p2', 13))).toBe(true);
    expect(s.list().map((f) => f.matchId)).toEqual(['m3', 'm2', 'm2']);
  });
});
