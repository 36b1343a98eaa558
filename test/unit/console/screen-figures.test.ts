// The console's figures that a first day found wrong: grouping choices from each market's tick and
// price (no 1000 bucket on a ~$144 market), leverage "–" when there is none, a Close bounded by a
// slippage it shows and saying plainly when nothing filled, and order history from REST after a reload.
import { describe, expect, it } from 'vitest';
import type { Order } from '../../../packages/client/src/index.js';
import { UserOrdersStore } from '../../../packages/client/src/index.js';
import { groupingsFor } from '../../../sandbox/console/app/book.js';
import { times } from '../../../sandbox/console/app/account.js';
import { closeBound, closeOrder, describeClose } from '../../../sandbox/console/app/close.js';

const rules = (symbol: string, szDecimals: number) => ({
  symbol, status: 'active' as const, szDecimals, minNotional: '10.0000000000', maxLeverage: 20, sizeStep: '0', priceSigFigs: 5, maxPriceDecimals: 6 - szDecimals, lastTrade: null,
  stats24h: { open: null, high: null, low: null, last: null, change: null, changePct: null, baseVolume: '0', quoteVolume: '0', trades: 0, asOfSeq: null },
  openInterest: '0',
});
const sol = rules('SOL-PERP', 2);
const btc = rules('BTC-PERP', 4);

describe('book grouping choices', () => {
  it('derive from the tick and the price: a ~$144 market stops at 1, a ~$65 000 one at 100', () => {
    expect(groupingsFor(sol, '144.37').map((g) => g.value)).toEqual(['none', 'tick:0.01', 'tick:0.1', 'tick:1', 'sig:4', 'sig:3']);
    expect(groupingsFor(sol, '144.37').map((g) => g.label)).toContain('1 (0.69%)');
    expect(groupingsFor(btc, '65012').map((g) => g.value)).toEqual(['none', 'tick:1', 'tick:10', 'tick:100', 'sig:4', 'sig:3', 'sig:2']);
    expect(groupingsFor(btc, null)).toEqual([{ value: 'none', label: 'none' }]);
  });
});

describe('leverage on screen', () => {
  it('is a real figure or "–"', () => {
    expect(times('0.0000000000')).toBe('–');
    expect(times(null)).toBe('–');
    expect(times('0.0123450000')).toBe('0.0123×');
    expect(times('0.0000100000')).toBe('< 0.0001×');
    expect(times('2.5000000000')).toBe('2.50×');
  });
});

describe('Close', () => {
  it('is a reduce-only market order no worse than 1 % from the mark, on the price grid', () => {
    expect(closeOrder(sol, { size: '2.5000000000', markPrice: '144.3700000000' })).toEqual({ market: 'SOL-PERP', side: 'sell', type: 'market', size: '2.5', price: '142.93', reduceOnly: true });
    expect(closeOrder(btc, { size: '-0.0100000000', markPrice: '65012.0000000000' })).toMatchObject({ side: 'buy', size: '0.01', price: '65662' });
    expect(closeBound(btc, 'sell', '65012')).toBe('64362'); // 64361.88 rounded up: never looser than 1 %
  });

  it('says plainly when nothing filled, and what did when some did', () => {
    const order = { side: 'sell', size: '2.5000000000', price: '142.93' };
    const show = (v: string) => v;
    expect(describeClose(order, { status: 'cancelled', filledSize: '0.0000000000', avgPrice: null }, show)).toBe('nothing filled: no bid at or above 142.93 (within 1 % of the mark); the position stays open');
    expect(describeClose(order, { status: 'cancelled', filledSize: '1.0000000000', avgPrice: '144.1' }, show)).toBe('partly closed: 1 of 2.5 at 144.1; the rest found no bid at or above 142.93');
    expect(describeClose(order, { status: 'filled', filledSize: '2.5000000000', avgPrice: '144.1' }, show)).toBe('closed 2.5 at 144.1');
  });
});

describe('order history after a reload', () => {
  const rest = (orderId: string, status: Order['status'], updatedSeq: number): Order => ({
    orderId, party: 'p', market: 'SOL-PERP', side: 'buy', type: 'limit', tif: 'gtc', price: '144.0000000000', size: '1.0000000000', filledSize: status === 'filled' ? '1.0000000000' : '0.0000000000',
    avgPrice: status === 'filled' ? '144.0000000000' : null, status, clientOrderId: null, reduceOnly: false, tpTriggerPrice: null, tpLimitPrice: null, tpSize: null,
    slTriggerPrice: null, slLimitPrice: null, slSize: null, createdSeq: updatedSeq - 1, updatedSeq, createdAt: '2026-12-02T00:00:00.000Z', updatedAt: '2026-12-02T00:00:01.000Z',
  });

  it('comes back from REST: a filled order is in the history, an open one in the open orders', () => {
    const store = new UserOrdersStore();
    expect(store.load([rest('o-2', 'open', 20), rest('o-1', 'filled', 10)])).toBe(true);
    expect(store.recent().map((o) => [o.orderId, o.status])).toEqual([['o-1', 'filled']]);
    expect(store.open().map((o) => o.orderId)).toEqual(['o-2']);
    // A stream update newer than the REST record wins; an older REST record changes nothing.
    expect(store.load([rest('o-1', 'open', 5)])).toBe(false);
    expect(store.recent()[0]!.status).toBe('filled');
  });
});
