// Book views: grouping (bids down, asks up), depth, deltas and the CRC-32 checksum of the top 25 levels.
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/decimal.js';
import { checksum, checksumText, diffSide, groupPrice, parseGrouping, viewLevels, type Grouping } from '../../../src/projections/book-view.js';
import { MarketBook } from '../../../src/projections/order-book.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';

let seq = 0;
function place(book: MarketBook, id: string, side: 'buy' | 'sell', price: string, size: string): void {
  const e: EngineEvent = {
    seq: ++seq,
    kind: 'engine.order_placed',
    ts: '2026-11-24T00:00:00.000Z',
    market: book.market,
    payload: { order: { orderId: id, side, type: 'limit', tif: 'gtc', price, size, filledSize: '0', status: 'open' } },
  };
  book.apply(e);
}

const g = (t: string): Grouping => parseGrouping(t)!;
const p = parseDecimal;

describe('book views', () => {
  it('groups by significant figures and tick multiples, bids down and asks up', () => {
    expect(groupPrice(p('65012.5'), 'buy', g('sig:3'))).toBe(p('65000'));
    expect(groupPrice(p('65012.5'), 'sell', g('sig:3'))).toBe(p('65100'));
    expect(groupPrice(p('65000'), 'sell', g('sig:3'))).toBe(p('65000'));
    expect(groupPrice(p('0.012345'), 'buy', g('sig:3'))).toBe(p('0.0123'));
    expect(groupPrice(p('0.012345'), 'sell', g('sig:3'))).toBe(p('0.0124'));
    expect(groupPrice(p('3.14159'), 'buy', g('sig:2'))).toBe(p('3.1'));
    expect(groupPrice(p('150.25'), 'buy', g('tick:0.5'))).toBe(p('150'));
    expect(groupPrice(p('150.25'), 'sell', g('tick:0.5'))).toBe(p('150.5'));
    expect(groupPrice(p('150.5'), 'sell', g('tick:0.5'))).toBe(p('150.5'));
    expect(groupPrice(p('65012.5'), 'buy', g('none'))).toBe(p('65012.5'));
  });

  it('sums sizes and order counts per grouped level, best first, cut at depth', () => {
    seq = 0;
    const book = new MarketBook('BTC-PERP');
    place(book, 'b1', 'buy', '100.4', '1');
    place(book, 'b2', 'buy', '100.1', '2');
    place(book, 'b3', 'buy', '99.9', '3');
    place(book, 'b4', 'buy', '98', '4');
    place(book, 'a1', 'sell', '101.2', '5');
    place(book, 'a2', 'sell', '101.9', '6');
    const v = viewLevels(book, 2, g('tick:1'));
    expect(v.bids).toEqual([
      ['100.0000000000', '3.0000000000', 2],
      ['99.0000000000', '3.0000000000', 1],
    ]);
    expect(v.asks).toEqual([['102.0000000000', '11.0000000000', 2]]);
    expect(viewLevels(book, 1, g('none')).bids).toEqual([['100.4000000000', '1.0000000000', 1]]);
  });

  it('a delta lists changed and added levels, and removed ones with size 0', () => {
    const before: Array<[string, string, number]> = [
      ['100', '1', 1],
      ['99', '2', 1],
    ];
    const after: Array<[string, string, number]> = [
      ['100', '1', 1],
      ['99', '3', 2],
      ['98', '1', 1],
    ];
    expect(diffSide(before, after)).toEqual([
      ['99', '3', 2],
      ['98', '1', 1],
    ]);
    expect(diffSide(after, before.slice(0, 1))).toEqual([
      ['99', '0.0000000000', 0],
      ['98', '0.0000000000', 0],
    ]);
  });

  it('checksums the first 25 levels interleaved bid, ask as CRC-32 of price:size pairs', () => {
    const bids = Array.from({ length: 30 }, (_, i) => [`${100 - i}.0000000000`, '1.0000000000', 1] as [string, string, number]);
    const asks = Array.from({ length: 2 }, (_, i) => [`${101 + i}.0000000000`, '2.0000000000', 1] as [string, string, number]);
    const text = checksumText({ bids, asks });
    expect(text.startsWith('100.0000000000:1.0000000000:101.0000000000:2.0000000000:99.0000000000:1.0000000000:102.0000000000:2.0000000000:98.0000000000')).toBe(true);
    expect(text.split(':').length).toBe((25 + 2) * 2);
    expect(checksum({ bids, asks })).toBe(crc32(text) >>> 0);
    // A size change anywhere in the top 25 changes it; past 25 it does not.
    const changed = bids.map((l, i) => (i === 24 ? ([l[0], '9.0000000000', 1] as [string, string, number]) : l));
    expect(checksum({ bids: changed, asks })).not.toBe(checksum({ bids, asks }));
    const deep = bids.map((l, i) => (i === 27 ? ([l[0], '9.0000000000', 1] as [string, string, number]) : l));
    expect(checksum({ bids: deep, asks })).toBe(checksum({ bids, asks }));
  });
});
