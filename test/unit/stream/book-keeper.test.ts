// BookKeeper: a book is seeded from the engine's read with the market's events held meanwhile (those
// at or below the read's seq dropped, the later ones applied); a poll at the same seq that differs is
// a divergence, repaired from the poll and counted; an unknown market stops seeding.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../../src/decimal.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import { BookKeeper, type EngineBook } from '../../../src/stream/book-keeper.js';
import { eventually } from '../../support/eventually.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const ts = '2026-11-25T00:00:00.000Z';
const placed = (seq: number, id: string, side: 'buy' | 'sell', price: string, size: string): EngineEvent => ({
  seq, kind: 'engine.order_placed', ts, market: 'BTC-PERP', party: 'p::x',
  payload: { order: { orderId: id, side, type: 'limit', tif: 'gtc', price, size, filledSize: '0', status: 'open' } },
});
const cancelled = (seq: number, id: string): EngineEvent => ({ seq, kind: 'engine.order_cancelled', ts, market: 'BTC-PERP', party: 'p::x', payload: { orderId: id, reason: 'user' } });
const silent = { warn: () => {}, info: () => {} };

function levels(k: BookKeeper, side: 'buy' | 'sell'): Array<[string, string, number]> {
  return [...k.book('BTC-PERP')!.side(side).view()].map((l) => [formatDecimal(l.price), formatDecimal(l.size), l.count]);
}

describe('BookKeeper', () => {
  it('seeds from the engine read and applies only the held events after its seq', async () => {
    let answer!: (b: EngineBook) => void;
    const rebuilt: string[] = [];
    const k = new BookKeeper({
      readBook: () => new Promise((r) => (answer = r)),
      changed: () => {},
      rebuilt: (m) => rebuilt.push(m),
      registry: new Registry(),
      logger: silent,
    });
    k.event(placed(1, 'ignored', 'buy', '90', '1')); // not tracked yet: not held
    k.track(['BTC-PERP']);
    await eventually(() => answer !== undefined, { what: 'the seed read' }); // events from now on are held
    k.event(placed(10, 'a', 'buy', '99', '1')); // in the read already (seq 11 below)
    k.event(placed(11, 'b', 'sell', '101', '2'));
    k.event(placed(12, 'c', 'buy', '98', '3')); // after the read: applied
    expect(k.book('BTC-PERP')).toBeNull();
    answer({ market: 'BTC-PERP', seq: 11, bids: [['99', '1']], asks: [['101', '2']] });
    await eventually(() => rebuilt.length > 0, { what: 'the book seeded' });
    expect(rebuilt).toEqual(['BTC-PERP']);
    expect(levels(k, 'buy')).toEqual([
      ['99.0000000000', '1.0000000000', 1],
      ['98.0000000000', '3.0000000000', 1],
    ]);
    expect(levels(k, 'sell')).toEqual([['101.0000000000', '2.0000000000', 1]]);
    expect(k.book('BTC-PERP')!.seq).toBe(12);
    // A late event at or below the book's seq changes nothing; a later cancel of a known order does.
    k.event(placed(12, 'dup', 'buy', '97', '1'));
    k.event(cancelled(13, 'c'));
    expect(levels(k, 'buy')).toEqual([['99.0000000000', '1.0000000000', 1]]);
  });

  it('repairs a divergence at the same seq from the poll, counts it, and ignores polls of other seqs', async () => {
    const registry = new Registry();
    const rebuilt: string[] = [];
    const k = new BookKeeper({
      readBook: async () => ({ market: 'BTC-PERP', seq: 5, bids: [['99', '1']], asks: [] }),
      changed: () => {},
      rebuilt: (m) => rebuilt.push(m),
      registry,
      logger: silent,
    });
    k.track(['BTC-PERP']);
    await eventually(() => k.book('BTC-PERP') !== null, { what: 'the book seeded' });
    expect(k.reconcile({ market: 'BTC-PERP', seq: 5, bids: [['99', '1']], asks: [] }, 20)).toBe(false);
    expect(k.reconcile({ market: 'BTC-PERP', seq: 4, bids: [['50', '1']], asks: [] }, 20)).toBe(false); // older poll
    expect(k.reconcile({ market: 'BTC-PERP', seq: 5, bids: [['99', '2']], asks: [['100', '1']] }, 20)).toBe(true);
    expect(levels(k, 'buy')).toEqual([['99.0000000000', '2.0000000000', 1]]);
    expect(levels(k, 'sell')).toEqual([['100.0000000000', '1.0000000000', 1]]);
    expect(rebuilt).toEqual(['BTC-PERP', 'BTC-PERP']);
    expect((await registry.getSingleMetricAsString('bff_book_divergences_total'))).toContain('bff_book_divergences_total{market="BTC-PERP"} 1');
  });

  it('stops seeding a market the engine does not know', async () => {
    let reads = 0;
    const clock = new VirtualClock();
    const k = new BookKeeper({
      clock,
      readBook: async () => {
        reads++;
        throw Object.assign(new Error('engine answered HTTP 400 market_unsupported'), { status: 400 });
      },
      changed: () => {},
      rebuilt: () => {},
      registry: new Registry(),
      logger: silent,
    });
    k.track(['NOPE-PERP']);
    await clock.advance(0); // the seed's first read
    await eventually(() => k.tracked().length === 0, { what: 'the market dropped' });
    await clock.advance(60_000); // a minute of the keeper's time: no read again
    expect(reads).toBe(1);
    expect(k.tracked()).toEqual([]);
    k.stop();
  });
});

describe('BookKeeper seeded order by order from the mirror', () => {
  const order = (orderId: string, side: 'buy' | 'sell', price: string, remaining: string) => ({ orderId, side, price, remaining });
  const filled = (seq: number, maker: string, taker: string, takerSide: 'buy' | 'sell', price: string, size: string): EngineEvent => ({
    seq, kind: 'engine.order_filled', ts, market: 'BTC-PERP', payload: { matchId: `m${seq}`, price, size, takerSide, takerOrderId: taker, makerOrderId: maker, legs: [] },
  });
  const tick = (seq: number): EngineEvent => ({ seq, kind: 'engine.tick_start', ts, payload: { tick: seq } });

  function keeper(options: Partial<ConstructorParameters<typeof BookKeeper>[0]> & { position?: () => number | null }) {
    const rebuilt: string[] = [];
    const registry = new Registry();
    const k = new BookKeeper({
      readBook: async () => null,
      changed: () => {},
      rebuilt: (m) => rebuilt.push(m),
      registry,
      logger: silent,
      ...options,
    });
    return { k, rebuilt, registry };
  }

  it('a cancel of an order that rested long before the seed takes its level off (the mirror knows the order)', async () => {
    let position = 40;
    const { k, rebuilt, registry } = keeper({
      position: () => position,
      // The mirror at seq 42: two orders at 99 (one of them placed at seq 25, partly filled), one ask.
      readOrders: async () => ({ asOfSeq: 42, orders: [order('old', 'buy', '99', '0.5'), order('new', 'buy', '99', '1'), order('ask', 'sell', '101', '2')] }),
    });
    k.track(['BTC-PERP']);
    k.event(tick(41)); // before the mirror's seq: in the seed already
    k.event(placed(42, 'new', 'buy', '99', '1')); // in the seed already (held, dropped)
    k.event(placed(43, 'c', 'buy', '98', '3')); // after: applied
    position = 43;
    await eventually(() => rebuilt.length > 0, { what: 'the book seeded' });
    expect(rebuilt).toEqual(['BTC-PERP']);
    expect(k.source('BTC-PERP')).toBe('orders');
    expect(levels(k, 'buy')).toEqual([
      ['99.0000000000', '1.5000000000', 2],
      ['98.0000000000', '3.0000000000', 1],
    ]);
    expect(k.book('BTC-PERP')!.seq).toBe(43);
    k.event(cancelled(44, 'old'));
    expect(levels(k, 'buy')[0]).toEqual(['99.0000000000', '1.0000000000', 1]);
    k.event(cancelled(45, 'new'));
    expect(levels(k, 'buy')).toEqual([['98.0000000000', '3.0000000000', 1]]);
    // A fill against a seeded maker takes its size off; the book's seq follows the events.
    k.event(filled(46, 'ask', 'taker', 'buy', '101', '0.5'));
    expect(levels(k, 'sell')).toEqual([['101.0000000000', '1.5000000000', 1]]);
    expect(k.book('BTC-PERP')!.seq).toBe(46);
    expect(await registry.getSingleMetricAsString('bff_book_seeds_total')).toContain('bff_book_seeds_total{market="BTC-PERP",source="orders"} 1');
  });

  it('reads the mirror again while it is behind the point the stream was at, and takes its seq from the engine when no event set it', async () => {
    const asOf = [10, 10, 20];
    let engineReads = 0;
    const { k } = keeper({
      position: () => 20,
      readOrders: async () => ({ asOfSeq: asOf.shift() ?? 20, orders: [order('a', 'buy', '99', '1')] }),
      readBook: async () => {
        engineReads++;
        return { market: 'BTC-PERP', seq: 7, bids: [['99', '1']], asks: [] };
      },
    });
    k.track(['BTC-PERP']);
    await eventually(() => k.book('BTC-PERP') !== null, { timeoutMs: 2_000 });
    expect(asOf).toEqual([]); // read three times
    expect(engineReads).toBeGreaterThanOrEqual(1);
    expect(k.book('BTC-PERP')!.seq).toBe(7); // the engine's book seq (no event after the mirror changed it)
    expect(levels(k, 'buy')).toEqual([['99.0000000000', '1.0000000000', 1]]);
  });

  it('shows the engine levels after BOOK_MIRROR_WAIT_MS, then swaps in the order-by-order book once the mirror catches up', async () => {
    let mirror = 5;
    const { k, rebuilt } = keeper({
      position: () => 30,
      mirrorWaitMs: 20,
      readOrders: async () => ({ asOfSeq: mirror, orders: [order('a', 'buy', '99', '1'), order('b', 'buy', '99', '2')] }),
      readBook: async () => ({ market: 'BTC-PERP', seq: 30, bids: [['99', '3']], asks: [] }),
    });
    k.track(['BTC-PERP']);
    await eventually(() => k.book('BTC-PERP') !== null, { timeoutMs: 2_000 });
    expect(k.source('BTC-PERP')).toBe('levels');
    expect(levels(k, 'buy')).toEqual([['99.0000000000', '3.0000000000', 1]]);
    mirror = 30;
    await eventually(() => k.source('BTC-PERP') === 'orders', { timeoutMs: 3_000 });
    expect(levels(k, 'buy')).toEqual([['99.0000000000', '3.0000000000', 2]]);
    expect(k.book('BTC-PERP')!.seq).toBe(30); // kept from the book it replaced
    expect(rebuilt).toEqual(['BTC-PERP', 'BTC-PERP']); // the counts changed: sent whole
    k.event(cancelled(31, 'b'));
    expect(levels(k, 'buy')).toEqual([['99.0000000000', '1.0000000000', 1]]);
  });

  it('a repair is counted, logged and followed by a re-seed order by order', async () => {
    const warnings: string[] = [];
    const { k, registry } = keeper({
      position: () => 12,
      logger: { warn: (_o, msg) => warnings.push(msg), info: () => {} },
      readOrders: async () => ({ asOfSeq: 12, orders: [order('a', 'buy', '99', '1')] }),
      readBook: async () => ({ market: 'BTC-PERP', seq: 12, bids: [['99', '1']], asks: [] }),
    });
    k.track(['BTC-PERP']);
    await eventually(() => k.book('BTC-PERP') !== null, { timeoutMs: 2_000 });
    // The engine shows another book at the same seq (what a lost event would leave): repaired, then re-seeded.
    expect(k.reconcile({ market: 'BTC-PERP', seq: 12, bids: [['99', '1'], ['98', '4']], asks: [] }, 20)).toBe(true);
    expect(warnings.some((w) => w.includes('differs from the engine book'))).toBe(true);
    expect(await registry.getSingleMetricAsString('bff_book_divergences_total')).toContain('bff_book_divergences_total{market="BTC-PERP"} 1');
    expect(k.source('BTC-PERP')).toBe('levels');
    await eventually(() => k.source('BTC-PERP') === 'orders', { timeoutMs: 2_000 });
    expect(await registry.getSingleMetricAsString('bff_book_seeds_total')).toContain('bff_book_seeds_total{market="BTC-PERP",source="orders"} 2');
  });

  it('after a history replacement, does not seed from a mirror that holds another history at the first seq streamed', async () => {
    // The mirror's event at the anchor seq (3), as the seed read returns it.
    let mirrorEvent: EngineEvent = { seq: 3, kind: 'engine.tick_start', ts, payload: { tick: 3 } };
    const asked: Array<number | null> = [];
    // The mirror events the reads returned: one read twice means the keeper judged it (reads follow
    // one another), whatever the machine's load.
    const served: EngineEvent[] = [];
    const judged = (e: EngineEvent) => {
      const from = served.length;
      return eventually(() => served.slice(from).filter((x) => x === e).length >= 2, { timeoutMs: 10_000 });
    };
    let position = 3;
    const { k } = keeper({
      // The source still reports the old history's position right after a replacement.
      position: () => position,
      mirrorWaitMs: 60_000,
      readOrders: async (_m, anchor) => {
        asked.push(anchor);
        served.push(mirrorEvent);
        return { asOfSeq: 3, orders: [order('a', 'buy', '99', '1')], anchor: mirrorEvent };
      },
      readBook: async () => ({ market: 'BTC-PERP', seq: 2, bids: [['99', '1']], asks: [] }),
    });
    k.track(['BTC-PERP']);
    await eventually(() => k.book('BTC-PERP') !== null, { timeoutMs: 2_000 });
    position = 15_715;
    k.reset(2);
    expect(k.book('BTC-PERP')).toBeNull();
    const readsBefore = served.length;
    await eventually(() => served.length >= readsBefore + 2, { what: 'the mirror read twice (the first one judged)' });
    expect(k.book('BTC-PERP')).toBeNull(); // no event of the new history yet: nothing to check the mirror by
    k.event(placed(3, 'x', 'buy', '50', '1'));
    await judged(mirrorEvent);
    expect(asked.at(-1)).toBe(3);
    expect(k.book('BTC-PERP')).toBeNull(); // the mirror's event 3 is a tick: another history
    // The same kind at the same seq, at another engine time: still the old history (the soak's
    // engines place orders all the time, so the kinds at a seq often agree across histories).
    mirrorEvent = { ...placed(3, 'x', 'buy', '50', '1'), ts: '2026-11-24T23:59:59.999Z' };
    await judged(mirrorEvent);
    expect(k.book('BTC-PERP')).toBeNull();
    // The same kind at the same engine time (the engine's clock is in milliseconds), another order:
    // still another history.
    mirrorEvent = placed(3, 'y', 'buy', '50', '1');
    await judged(mirrorEvent);
    expect(k.book('BTC-PERP')).toBeNull();
    // The event the stream delivered, as the database gives it back (microseconds, its key order).
    const streamed = placed(3, 'x', 'buy', '50', '1');
    const fields = (streamed.payload as { order: Record<string, unknown> }).order;
    const reversed = Object.fromEntries(Object.entries(fields).reverse());
    mirrorEvent = { ...streamed, ts: '2026-11-25T00:00:00.000000Z', payload: { order: reversed } };
    await eventually(() => k.book('BTC-PERP') !== null, { timeoutMs: 3_000 });
    expect(k.source('BTC-PERP')).toBe('orders');
  });
});

