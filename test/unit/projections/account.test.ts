// The account reducer alone: the engine's reservation rule (opening part fixed when the taker's own
// matches end, capped by maker fills), and the database seed merging with the events whatever the
// order (the newer seq wins per entity), so a seed read before, during or after the events gives
// the same account.
import { describe, expect, it } from 'vitest';
import { accountView, applyAccountEvent, initialAccounts, mergeSeed, pruneIncomplete, type AccountSeed, type AccountsState } from '../../../src/projections/account.js';
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
const leverage = [{ market: M, maxLeverage: 20 }];

/** The memory of a party complete from the start (an empty seed) that saw every one of `events`: what the engine holds. */
function sawEverything(party: string, events: readonly EngineEvent[]): AccountsState {
  const s = initialAccounts();
  mergeSeed(s, party, { asOfSeq: 0, balance: null, positions: [], orders: [], marks: [], leverage });
  for (const e of events) applyAccountEvent(s, e);
  return s;
}
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
    const expected = accountView(sawEverything(A, history), A);
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
    const reference = sawEverything(A, events);
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

  it('a seed read while an order was still matching gives its exact opening, however far the memory has gone since (the party evicted meanwhile)', () => {
    // Bob rests a buy (seq 2) and a sell (seq 3); the gateway drops Bob (evicted) right after. Alice's
    // sell (seq 4) ends Bob's sell's matching and fills half his buy (seq 5): Bob is long 0.005, so a
    // sell placed now would open only 0.005, but his rested with none to close, 0.01 × 59 500 / 20.
    const events: EngineEvent[] = [
      deposit(1, B, '5000'),
      placed(2, B, 'jw', 'buy', '0.01', '59000'),
      placed(3, B, 'k0', 'sell', '0.01', '59500'),
      placed(4, A, 'as', 'sell', '0.005', '59000'),
      filled(5, 'as', 'jw', '0.005', '59000', [leg(A, 'as', 'taker', 'sell', '0.005', '59000', 'pa', '-0.005', '5000'), leg(B, 'jw', 'maker', 'buy', '0.005', '59000', 'pb', '0.005', '5000')]),
    ];
    const reference = sawEverything(B, events);
    expect(accountView(reference, B).orders.map((o) => [o.orderId, o.margin])).toEqual([
      ['k0', '29.7500000000'],
      ['jw', '14.7500000000'],
    ]);
    // The mirror lags: its snapshot ends at seq 3, where nothing after Bob's sell says its matching is over.
    const seed3: AccountSeed = {
      asOfSeq: 3,
      balance: { value: '5000', seq: 1 },
      positions: [],
      orders: [
        { orderId: 'jw', market: M, side: 'buy', price: '59000', remaining: '0.01', rests: true, opening: '0.01', updatedSeq: 2 },
        { orderId: 'k0', market: M, side: 'sell', price: '59500', remaining: '0.01', rests: true, opening: '0.01', updatedSeq: 3 },
      ],
      marks: [],
      leverage,
    };
    for (const evictedAfter of [0, 1, 2, 3]) {
      const s = initialAccounts();
      mergeSeed(s, B, { ...seed3, asOfSeq: 0, balance: null, orders: [] });
      for (const e of events.slice(0, evictedAfter)) applyAccountEvent(s, e);
      s.parties.delete(B); // evicted: dropped whole (src/stream/account-book.ts)
      for (const e of events.slice(evictedAfter)) applyAccountEvent(s, e);
      mergeSeed(s, B, seed3);
      expect({ ...accountView(s, B), asOfSeq: 0 }, `evicted after ${evictedAfter} events`).toEqual({ ...accountView(reference, B), asOfSeq: 0 });
    }
  });

  it('an order\'s opening from a seed read during its own taker matches is its opening at rest: later own fills only lower the remaining that caps it', () => {
    // Alice is long 0.002; her sell of 0.03 takes 0.001 and 0.003 from two resting bids: the first
    // fill closes half her long, the second crosses zero. At rest 0.026 remains and nothing is
    // left to close, so all of it opens.
    const events: EngineEvent[] = [
      deposit(1, A, '5000'),
      deposit(2, B, '5000'),
      placed(3, B, 'b1', 'sell', '0.002', '60000'),
      placed(4, A, 'a1', 'buy', '0.002', '60000'),
      filled(5, 'a1', 'b1', '0.002', '60000', [leg(A, 'a1', 'taker', 'buy', '0.002', '60000', 'pa', '0.002', '5000'), leg(B, 'b1', 'maker', 'sell', '0.002', '60000', 'pb', '-0.002', '5000')]),
      placed(6, B, 'b2', 'buy', '0.001', '59000'),
      placed(7, B, 'b3', 'buy', '0.003', '58000'),
      placed(8, A, 'a2', 'sell', '0.03', '58000'),
      filled(9, 'a2', 'b2', '0.001', '59000', [leg(A, 'a2', 'taker', 'sell', '0.001', '59000', 'pa', '0.001', '5000'), leg(B, 'b2', 'maker', 'buy', '0.001', '59000', 'pb', '-0.001', '5000')]),
      filled(10, 'a2', 'b3', '0.003', '58000', [leg(A, 'a2', 'taker', 'sell', '0.003', '58000', 'pa', '-0.002', '5000'), leg(B, 'b3', 'maker', 'buy', '0.003', '58000', 'pb', '0.002', '5000')]),
      deposit(11, B, '5001'),
    ];
    const reference = sawEverything(A, events);
    const rested = accountView(reference, A);
    expect(rested.orders).toMatchObject([{ orderId: 'a2', remaining: '0.0260000000', margin: '75.4000000000' }]);
    // Snapshots after the placement, after the first own fill and after the second (what src/db/queries/account.ts reads).
    const seeds: AccountSeed[] = [
      { asOfSeq: 8, balance: { value: '5000', seq: 5 }, positions: [{ positionId: 'pa', market: M, size: '0.002', entryPrice: '60000', realizedPnl: '0', updatedSeq: 5 }], orders: [{ orderId: 'a2', market: M, side: 'sell', price: '58000', remaining: '0.03', rests: true, opening: '0.028', updatedSeq: 8 }], marks: [], leverage },
      { asOfSeq: 9, balance: { value: '5000', seq: 9 }, positions: [{ positionId: 'pa', market: M, size: '0.001', entryPrice: '60000', realizedPnl: '0', updatedSeq: 9 }], orders: [{ orderId: 'a2', market: M, side: 'sell', price: '58000', remaining: '0.029', rests: true, opening: '0.028', updatedSeq: 9 }], marks: [], leverage },
      { asOfSeq: 10, balance: { value: '5000', seq: 10 }, positions: [{ positionId: 'pa', market: M, size: '-0.002', entryPrice: '58000', realizedPnl: '0', updatedSeq: 10 }], orders: [{ orderId: 'a2', market: M, side: 'sell', price: '58000', remaining: '0.026', rests: true, opening: '0.026', updatedSeq: 10 }], marks: [], leverage },
    ];
    for (const seed of seeds) {
      for (const seenBefore of [seed.asOfSeq, events.length]) {
        const s = initialAccounts();
        for (const e of events.slice(0, seenBefore)) applyAccountEvent(s, e);
        pruneIncomplete(s, seed.asOfSeq);
        mergeSeed(s, A, seed);
        for (const e of events.slice(seenBefore)) applyAccountEvent(s, e);
        const view = accountView(s, A);
        expect(view.orders, `seed at ${seed.asOfSeq}, ${seenBefore} events before`).toEqual(rested.orders);
        expect(view.orderMargin).toBe(rested.orderMargin);
      }
    }
  });
});
