// The account reducer alone: the engine's reservation rule (opening part fixed when the taker's own
// matches end, capped by maker fills), and the database seed merging with the events whatever the
// order (the newer seq wins per entity), so a seed read before, during or after the events gives
// the same account.
import { describe, expect, it } from 'vitest';
import { accountView, applyAccountEvent, initialAccounts, mergeSeed, pruneIncomplete, type AccountSeed } from '../../../src/projections/account.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';

const A = `alice::${'a'.repeat(64)}`;
const B = `bob::${'b'.repeat(64)}`;
const M = 'BTC-PERP';
const ts = '2026-11-25T00:00:00.000Z';

const deposit = (seq: number, party: string, newBalance: string): EngineEvent => ({ seq, kind: 'inbound.deposit', ts, party, payload: { amount: newBalance, depositId: `d${seq}`, newBalance, source: 'faucet', txId: null } });
const placed = (seq: number, party: string, orderId: string, side: 'buy' | 'sell', size: string, price: string, extra: Record<string, unknown> = {}): EngineEvent => ({
  seq,
  kind: 'engine.order_placed',
  ts,
  market: M,
  party,
  payload: { order: { orderId, party, market: M, side, type: 'limit', tif: 'gtc', price, size, filledSize: '0', reduceOnly: false, ...extra } },
});
const leg = (party: string, orderId: string, role: 'taker' | 'maker', side: 'buy' | 'sell', size: string, price: string, positionId: string, positionSize: string, newBalance: string) => ({
  party, orderId, role, side, size, price, fee: '0', positionId, positionSize, entryPrice: price, realizedPnl: '0', newBalance,
});
const filled = (seq: number, taker: string, maker: string, size: string, price: string, legs: ReturnType<typeof leg>[]): EngineEvent => ({
  seq, kind: 'engine.order_filled', ts, market: M, payload: { matchId: `m${seq}`, price, size, takerSide: legs[0]!.side, takerOrderId: taker, makerOrderId: maker, legs },
});
const cancelled = (seq: number, party: string, orderId: string): EngineEvent => ({ seq, kind: 'engine.order_cancelled', ts, market: M, party, payload: { orderId, reason: 'user' } });

/** Alice is short 0.01; she rests a buy of 0.05 at 59 000 (0.01 closes, 0.04 opens), half of which a maker fill takes. */
const history: EngineEvent[] = [
  deposit(1, A, '2000'),
  deposit(2, B, '2000'),
  placed(3, B, 'ob1', 'buy', '0.01', '60000'),
  placed(4, A, 'oa1', 'sell', '0.01', '60000'),
  filled(5, 'oa1', 'ob1', '0.01', '60000', [leg(A, 'oa1', 'taker', 'sell', '0.01', '60000', 'pa', '-0.01', '1999.7'), leg(B, 'ob1', 'maker', 'buy', '0.01', '60000', 'pb', '0.01', '2000')]),
  placed(6, A, 'oa2', 'buy', '0.05', '59000'),
  placed(7, B, 'ob2', 'sell', '0.02', '59000'),
  filled(8, 'ob2', 'oa2', '0.02', '59000', [leg(B, 'ob2', 'taker', 'sell', '0.02', '59000', 'pb', '-0.01', '2009.4'), leg(A, 'oa2', 'maker', 'buy', '0.01', '59000', 'pa', '0', '2009.7'), leg(A, 'oa2', 'maker', 'buy', '0.01', '59000', 'pa2', '0.01', '2009.7')]),
  deposit(9, A, '2109.7'),
  placed(10, B, 'ob3', 'buy', '0.1', '50000'),
  cancelled(11, B, 'ob3'),
];

/** The seed the database would give for alice as of `seq` (what src/db/queries/account.ts reads). */
function seedAt(seq: number): AccountSeed {
  const leverage = [{ market: M, maxLeverage: 20 }];
  if (seq < 5) return { asOfSeq: seq, balance: seq >= 1 ? { value: '2000', seq: 1 } : null, positions: [], orders: [], marks: [], leverage };
  if (seq < 8)
    return {
      asOfSeq: seq,
      balance: { value: '1999.7', seq: 5 },
      positions: [{ positionId: 'pa', market: M, size: '-0.01', entryPrice: '60000', realizedPnl: '0', updatedSeq: 5 }],
      orders: seq >= 6 ? [{ orderId: 'oa2', market: M, side: 'buy', price: '59000', remaining: '0.05', rests: true, opening: '0.04', updatedSeq: 6 }] : [],
      marks: [{ market: M, price: '60000', seq: 5 }],
      leverage,
    };
  return {
    asOfSeq: seq,
    balance: seq >= 9 ? { value: '2109.7', seq: 9 } : { value: '2009.7', seq: 8 },
    positions: [{ positionId: 'pa2', market: M, size: '0.01', entryPrice: '59000', realizedPnl: '0', updatedSeq: 8 }],
    orders: [{ orderId: 'oa2', market: M, side: 'buy', price: '59000', remaining: '0.03', rests: true, opening: '0.04', updatedSeq: 8 }],
    marks: [{ market: M, price: '59000', seq: 8 }],
    leverage,
  };
}

describe('account reducer', () => {
  it('follows the engine: collateral from deposits and fills, the opening part of a resting order, capped by maker fills', () => {
    const s = initialAccounts();
    mergeSeed(s, A, seedAt(0));
    const views = history.map((e) => (applyAccountEvent(s, e), accountView(s, A)));
    // After seq 6: short 0.01 at 60 000 (IM 30), buy 0.05 resting of which 0.04 opens: 0.04 × 59 000 / 20 = 118.
    expect(views[5]).toMatchObject({ collateral: '1999.7000000000', positionMargin: '30.0000000000', orderMargin: '118.0000000000', freeCollateral: '1851.7000000000' });
    // After the maker fill at seq 8: long 0.01 at 59 000 (IM 29.5); the rest 0.03 caps the reservation at 88.5.
    expect(views[7]).toMatchObject({ positionMargin: '29.5000000000', orderMargin: '88.5000000000', positions: [{ positionId: 'pa2', size: '0.0100000000', markPrice: '59000.0000000000' }] });
    // A deposit after the last fill counts (the spec's /balance would still say 2009.7).
    expect(views[8]).toMatchObject({ collateral: '2109.7000000000', collateralAsOfSeq: 9, equity: '2109.7000000000' });
  });

  it('gives the same account whatever seq the database seed was read at (before, during or after the events)', () => {
    const reference = initialAccounts();
    mergeSeed(reference, A, seedAt(0));
    for (const e of history) applyAccountEvent(reference, e);
    const expected = accountView(reference, A);
    for (let at = 0; at <= history.length; at++) {
      // Events up to `seenBefore` reached the memory before the seed (read at `at`) merged; the rest after.
      for (const seenBefore of [0, 3, 6, 8, history.length]) {
        const s = initialAccounts();
        for (const e of history.slice(0, seenBefore)) applyAccountEvent(s, e);
        pruneIncomplete(s, Math.min(at, seenBefore));
        mergeSeed(s, A, seedAt(at));
        for (const e of history.slice(seenBefore)) applyAccountEvent(s, e);
        expect({ ...accountView(s, A), asOfSeq: 0 }, `seed at ${at}, ${seenBefore} events before`).toEqual({ ...expected, asOfSeq: 0 });
      }
    }
  });

  it('an order filled after the seed was read is as of that fill, as in the live path (the view lists orders by their last change)', () => {
    // Alice rests a buy (seq 2) and a sell (seq 3); Bob's taker sell fills part of the buy at seq 5.
    const events: EngineEvent[] = [
      deposit(1, A, '2000'),
      placed(2, A, 'buy1', 'buy', '0.05', '59000'),
      placed(3, A, 'sell1', 'sell', '0.01', '61000'),
      placed(4, B, 'bsell', 'sell', '0.02', '59000'),
      filled(5, 'bsell', 'buy1', '0.02', '59000', [leg(B, 'bsell', 'taker', 'sell', '0.02', '59000', 'pb', '-0.02', '2000'), leg(A, 'buy1', 'maker', 'buy', '0.02', '59000', 'pa', '0.02', '2000')]),
    ];
    const leverage = [{ market: M, maxLeverage: 20 }];
    const seed4: AccountSeed = {
      asOfSeq: 4,
      balance: { value: '2000', seq: 1 },
      positions: [],
      orders: [
        { orderId: 'buy1', market: M, side: 'buy', price: '59000', remaining: '0.05', rests: true, opening: '0.05', updatedSeq: 2 },
        { orderId: 'sell1', market: M, side: 'sell', price: '61000', remaining: '0.01', rests: true, opening: '0.01', updatedSeq: 3 },
      ],
      marks: [],
      leverage,
    };
    // A complete party that saw every event.
    const reference = initialAccounts();
    mergeSeed(reference, A, { ...seed4, asOfSeq: 0, balance: null, orders: [] });
    for (const e of events) applyAccountEvent(reference, e);
    // A memory that began (or evicted Alice) after seq 4 saw only the fill; a seed read at seq 4 (the mirror behind) completes it.
    const s = initialAccounts();
    applyAccountEvent(s, events[4]!);
    mergeSeed(s, A, seed4);
    const view = accountView(s, A);
    expect(view.orders.map((o) => [o.orderId, o.remaining])).toEqual([
      ['sell1', '0.0100000000'],
      ['buy1', '0.0300000000'],
    ]);
    expect(view).toEqual(accountView(reference, A));
  });
});
