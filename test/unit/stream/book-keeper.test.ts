// BookKeeper: a book is seeded from the engine's read with the market's events held meanwhile (those
// at or below the read's seq dropped, the later ones applied); a poll at the same seq that differs is
// a divergence, repaired from the poll and counted; an unknown market stops seeding.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../../src/decimal.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import { BookKeeper, type EngineBook } from '../../../src/stream/book-keeper.js';

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
    await new Promise((r) => setTimeout(r, 5));
    k.event(placed(10, 'a', 'buy', '99', '1')); // in the read already (seq 11 below)
    k.event(placed(11, 'b', 'sell', '101', '2'));
    k.event(placed(12, 'c', 'buy', '98', '3')); // after the read: applied
    expect(k.book('BTC-PERP')).toBeNull();
    answer({ market: 'BTC-PERP', seq: 11, bids: [['99', '1']], asks: [['101', '2']] });
    await new Promise((r) => setTimeout(r, 5));
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
    await new Promise((r) => setTimeout(r, 5));
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
    const k = new BookKeeper({
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
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toBe(1);
    expect(k.tracked()).toEqual([]);
    k.stop();
  });
});
