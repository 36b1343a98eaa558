// Candle history from `fills`, bucketed exactly as the live candle frames (src/projections/candles.ts):
// UTC-aligned buckets floor(ts / length) * length, timed by the engine's event ts (= a fill's
// `created_at`), one trade per match (its taker legs, two for a flip, summed per seq), price of the
// match, volume in base units. Open and close are the prices of the first and last match by seq.
//
// No read scans the table: each slice of time is turned into a seq range (seq-search.ts) and read
// along `(market, seq desc)`. The newest `limit + 1` non-empty buckets below `end` are found by
// slices that start at the market's newest match below `end` and double in length until enough
// buckets are found, the window's start is passed, or the market has no older match: the rows read
// are at most about twice the rows of the buckets returned.
import type { Queryable } from '../database.js';
import { seqBound, seqSearch } from './seq-search.js';

export interface BarRow {
  bucketMs: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  trades: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Time (ms) of the market's newest match created before `beforeMs` (or at all, when null); null when none. */
export async function newestMatchBefore(sql: Queryable, market: string, beforeMs: number | null): Promise<number | null> {
  const rows =
    beforeMs === null
      ? await sql<{ at: string }[]>`
          SELECT created_at AS at FROM fills WHERE market = ${market} AND role = 'taker' ORDER BY seq DESC LIMIT 1`
      : await sql<{ at: string }[]>`
          WITH RECURSIVE ${seqSearch(sql, 'e', iso(beforeMs))}
          SELECT created_at AS at FROM fills
          WHERE market = ${market} AND seq < ${seqBound(sql, 'e')} AND role = 'taker' AND created_at < ${iso(beforeMs)}::timestamptz
          ORDER BY seq DESC LIMIT 1`;
  return rows[0] ? new Date(rows[0].at).getTime() : null;
}

/**
 * The non-empty buckets of `lengthMs` of matches created in [startMs, endMs), newest first. One pass
 * over the taker legs, no per-match grouping: a match's taker legs share its seq, price and time and
 * their sizes add up to its size, so sums and extremes over legs equal those over matches, open and
 * close are the price of the smallest and greatest seq, and a match is a distinct seq.
 */
export async function barsBetween(sql: Queryable, market: string, lengthMs: number, startMs: number, endMs: number, originMs = 0): Promise<BarRow[]> {
  const rows = await sql<Array<Omit<BarRow, 'bucketMs'> & { bucketAt: string }>>`
    WITH RECURSIVE ${seqSearch(sql, 's', iso(startMs))}, ${seqSearch(sql, 'e', iso(endMs))}
    SELECT date_bin(${lengthMs} * interval '1 millisecond', created_at, timestamptz 'epoch' + ${originMs} * interval '1 millisecond') AS bucket_at,
      ((min(ARRAY[seq::numeric, price]))[2])::text AS open,
      max(price)::text AS high,
      min(price)::text AS low,
      ((max(ARRAY[seq::numeric, price]))[2])::text AS close,
      sum(size)::text AS volume,
      count(DISTINCT seq)::int4 AS trades
    FROM fills
    WHERE market = ${market} AND role = 'taker'
      AND seq >= ${seqBound(sql, 's')} AND seq < ${seqBound(sql, 'e')}
      AND created_at >= ${iso(startMs)}::timestamptz AND created_at < ${iso(endMs)}::timestamptz
    GROUP BY 1 ORDER BY 1 DESC`;
  // new Date() also takes a driver without the gateway's timestamptz parser (a Date).
  return rows.map(({ bucketAt, ...bar }) => ({ bucketMs: new Date(bucketAt).getTime(), ...bar }));
}

export interface CandleWindow {
  market: string;
  lengthMs: number;
  /** Where buckets start counting (ms; the week's Monday origin, else 0). */
  originMs?: number;
  /** Buckets opening at or after this (ms), optional. */
  fromMs?: number | undefined;
  /** Buckets opening before this (ms), optional. */
  toMs?: number | undefined;
  limit: number;
}

export interface CandlePage {
  /** Oldest first, at most `limit`. */
  bars: BarRow[];
  /** Whether older non-empty buckets exist in the window. */
  more: boolean;
}

const ceilTo = (ms: number, len: number, origin = 0): number => Math.ceil((ms - origin) / len) * len + origin;
const floorTo = (ms: number, len: number, origin = 0): number => Math.floor((ms - origin) / len) * len + origin;
/** Slices per request at most; each finds at least one bucket and doubles in length. */
const MAX_SLICES = 40;

/** The `limit` newest non-empty buckets of the window, and whether older ones exist. */
export async function candlePage(sql: Queryable, w: CandleWindow): Promise<CandlePage> {
  const len = w.lengthMs;
  const origin = w.originMs ?? 0;
  // A bucket opening at or after `from` holds matches from ceil(from) on; one opening before `to`
  // holds matches before ceil(to).
  const lower = w.fromMs !== undefined ? ceilTo(w.fromMs, len, origin) : null;
  let end: number | null = w.toMs !== undefined ? ceilTo(w.toMs, len, origin) : null;
  const want = w.limit + 1;
  const found: BarRow[] = [];
  let span = want * len;
  for (let slice = 0; slice < MAX_SLICES && found.length < want; slice++) {
    if (end !== null && lower !== null && end <= lower) break;
    const newest = await newestMatchBefore(sql, w.market, end);
    if (newest === null || (lower !== null && newest < lower)) break;
    const sliceEnd = floorTo(newest, len, origin) + len;
    const sliceStart = Math.max(lower ?? -Infinity, sliceEnd - span);
    found.push(...(await barsBetween(sql, w.market, len, sliceStart, sliceEnd, origin)));
    end = sliceStart;
    span *= 2;
  }
  const more = found.length > w.limit;
  return { bars: found.slice(0, w.limit).reverse(), more };
}

/** The mirror's newest event time (ms): engine "now", which decides whether a bucket is closed. */
export async function headTime(sql: Queryable): Promise<number | null> {
  const rows = await sql<{ ts: string }[]>`SELECT ts FROM events ORDER BY seq DESC LIMIT 1`;
  return rows[0] ? new Date(rows[0].ts).getTime() : null;
}
