// What one subscription sees of a market's book (docs/stream.md "Order book deltas"): the best
// `depth` levels per side after price grouping, each `[price, size, orderCount]`, the difference
// between two such views (the delta: changed levels, size "0" for a level that left the view) and
// the checksum of the top 25 levels.
//
// Grouping, as Hyperliquid's nSigFigs and dYdX's grouped books: `sig:N` keeps N significant figures
// of the price, `tick:T` uses multiples of T. Bids round down and asks round up, so a grouped
// level never claims a better price than any order in it.
//
// Checksum (the OKX / Kraken scheme): CRC-32 (IEEE 802.3, as zlib) of the UTF-8 string made of the
// first 25 levels of each side, interleaved bid then ask — `bidPrice:bidSize:askPrice:askSize:…` —
// a side that has run out is skipped; prices and sizes in their 10-place wire form; the result as
// an unsigned 32-bit integer. Order counts are not part of it.
import { crc32 } from 'node:zlib';
import { formatDecimal, parseDecimal, SCALE } from '../decimal.js';
import type { BookSide, LevelView, MarketBook } from './order-book.js';

export type Grouping = { kind: 'none' } | { kind: 'sig'; figures: number } | { kind: 'tick'; tick: bigint };

export const CHECKSUM_LEVELS = 25;
export const MIN_SIG_FIGS = 2;
export const MAX_SIG_FIGS = 5;

/** A level on the wire: [price, size, orderCount]. */
export type WireLevel = [string, string, number];

export interface ViewLevels {
  bids: WireLevel[];
  asks: WireLevel[];
}

export function groupingKey(g: Grouping): string {
  switch (g.kind) {
    case 'none':
      return 'none';
    case 'sig':
      return `sig:${g.figures}`;
    case 'tick':
      return `tick:${formatDecimal(g.tick)}`;
  }
}

/**
 * Parses `sig:N` (N 2..5) or `tick:T` (T a positive decimal); null when malformed. `none` is no grouping.
 */
export function parseGrouping(text: string): Grouping | null {
  if (text === 'none') return { kind: 'none' };
  const sig = /^sig:(\d)$/.exec(text);
  if (sig) {
    const figures = Number(sig[1]);
    return figures >= MIN_SIG_FIGS && figures <= MAX_SIG_FIGS ? { kind: 'sig', figures } : null;
  }
  const tick = /^tick:(\d{1,12}(?:\.\d{1,10})?)$/.exec(text);
  if (tick) {
    const t = parseDecimal(tick[1]!);
    return t > 0n ? { kind: 'tick', tick: t } : null;
  }
  return null;
}

function roundTo(price: bigint, step: bigint, side: BookSide): bigint {
  const down = (price / step) * step;
  if (side === 'buy' || down === price) return down;
  return down + step;
}

/** The grouped price of a raw price: bids down, asks up. */
export function groupPrice(price: bigint, side: BookSide, g: Grouping): bigint {
  switch (g.kind) {
    case 'none':
      return price;
    case 'tick':
      return roundTo(price, g.tick, side);
    case 'sig': {
      // Significant figures of the price itself (not of its 10-place scaled units).
      const whole = price / SCALE;
      const digits = whole > 0n ? whole.toString().length : -leadingFractionZeros(price);
      const exponent = digits - g.figures; // step = 10^exponent
      if (exponent >= 0) return roundTo(price, 10n ** BigInt(exponent) * SCALE, side);
      const fracDigits = -exponent; // decimals kept
      if (fracDigits >= 10) return price;
      return roundTo(price, 10n ** BigInt(10 - fracDigits), side);
    }
  }
}

/** For a price below 1: how many zeros follow the decimal point before the first significant digit. */
function leadingFractionZeros(price: bigint): number {
  const frac = price.toString().padStart(10, '0');
  let n = 0;
  while (n < frac.length && frac[n] === '0') n++;
  return n;
}

/** The best `depth` grouped levels of one side, best first. */
export function topLevels(book: MarketBook, side: BookSide, depth: number, g: Grouping): WireLevel[] {
  const out: WireLevel[] = [];
  let price: bigint | null = null;
  let size = 0n;
  let count = 0;
  const flush = (): void => {
    if (price !== null) out.push([formatDecimal(price), formatDecimal(size), count]);
  };
  for (const level of book.side(side).view() as Iterable<LevelView>) {
    const p = groupPrice(level.price, side, g);
    if (p !== price) {
      flush();
      if (out.length >= depth) return out;
      price = p;
      size = 0n;
      count = 0;
    }
    size += level.size;
    count += level.count;
  }
  flush();
  return out.length > depth ? out.slice(0, depth) : out;
}

export function viewLevels(book: MarketBook, depth: number, g: Grouping): ViewLevels {
  return { bids: topLevels(book, 'buy', depth, g), asks: topLevels(book, 'sell', depth, g) };
}

/** Changed levels from `before` to `after` (one side): new or changed levels, and removed ones with size "0". */
export function diffSide(before: readonly WireLevel[], after: readonly WireLevel[]): WireLevel[] {
  const old = new Map(before.map((l) => [l[0], l]));
  const changes: WireLevel[] = [];
  for (const l of after) {
    const o = old.get(l[0]);
    old.delete(l[0]);
    if (!o || o[1] !== l[1] || o[2] !== l[2]) changes.push(l);
  }
  for (const price of old.keys()) changes.push([price, ZERO_SIZE, 0]);
  return changes;
}

export const ZERO_SIZE = '0.0000000000';

/** The checksum string (see the header): exported so the client documentation can show it. */
export function checksumText(levels: ViewLevels): string {
  const parts: string[] = [];
  for (let i = 0; i < CHECKSUM_LEVELS; i++) {
    const b = levels.bids[i];
    const a = levels.asks[i];
    if (b) parts.push(b[0], b[1]);
    if (a) parts.push(a[0], a[1]);
  }
  return parts.join(':');
}

export function checksum(levels: ViewLevels): number {
  return crc32(checksumText(levels)) >>> 0;
}
