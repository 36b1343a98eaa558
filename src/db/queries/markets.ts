// Markets: the indexer's copy of the engine's market list (`markets`, the fallback when the engine
// is down) and 24 h statistics per market from `fills`.
//
// A match is one seq; its taker legs (two for a flip) add up to the match size and share its price
// and time, so they are coalesced per seq exactly as the live candles count matches. The window is
// found by time → seq (seq-search.ts) and read along the primary key from that seq: only the
// window's rows are read, never the whole table.
import type { Queryable } from '../database.js';
import { seqBound, seqSearch } from './seq-search.js';

export interface MarketRow {
  symbol: string;
  szDecimals: number;
  minNotional: string;
  maxLeverage: number;
  status: string;
}

/** Every market of the mirror, by symbol (a handful of rows). */
export function listMarketRows(sql: Queryable): Promise<MarketRow[]> {
  return sql<MarketRow[]>`
    SELECT symbol, sz_decimals, min_notional::text AS min_notional, max_leverage, status
    FROM markets ORDER BY symbol`;
}

/** One market's matches in one UTC minute (or the part of it a read covered): mergeable partials. */
export interface MinuteStatsRow {
  market: string;
  minuteAt: string;
  firstSeq: number;
  /** Price of the match with firstSeq. */
  open: string;
  lastSeq: number;
  /** Price of the match with lastSeq. */
  last: string;
  high: string;
  low: string;
  /** Σ size. */
  base: string;
  /** Σ price × size, exact (20 decimal places). */
  quote: string;
  trades: number;
}

/** The newest seq of `fills` and of `events` (null when empty): two one-row index probes. */
export async function statsHeads(sql: Queryable): Promise<{ fillsSeq: number | null; eventsSeq: number | null }> {
  const [row] = await sql<{ fillsSeq: number | null; eventsSeq: number | null }[]>`
    SELECT (SELECT seq FROM fills ORDER BY seq DESC LIMIT 1) AS fills_seq,
           (SELECT seq FROM events ORDER BY seq DESC LIMIT 1) AS events_seq`;
  return { fillsSeq: row?.fillsSeq ?? null, eventsSeq: row?.eventsSeq ?? null };
}

export interface MinuteStatsRange {
  /** Matches created at or after this instant… */
  fromIso: string;
  /** …and before this one, when given. */
  toIso?: string;
  /** Only seqs above this one (what an earlier read already covered), when given. */
  afterSeq?: number;
  /** Only seqs up to this one: the fills head read just before, so a refresh knows what it covered. */
  upToSeq: number;
}

/**
 * Per market and UTC minute: first/last match (seq and price), high, low, base and quote volume,
 * match count, over a range of time and seqs. One pass over the taker legs, no per-match grouping:
 * a match's taker legs share its seq, price and time and their sizes add up to its size, so sums and
 * extremes over legs equal those over matches and a match is a distinct seq. The time → seq search
 * gives the lower seq bound; with both bounds the planner walks the pk over the range (with one it
 * guesses a third of the table and scans all of it).
 */
export function minuteStats(sql: Queryable, r: MinuteStatsRange): Promise<MinuteStatsRow[]> {
  return sql<MinuteStatsRow[]>`
    WITH RECURSIVE ${seqSearch(sql, 'w', r.fromIso)}${r.toIso !== undefined ? sql`, ${seqSearch(sql, 'e', r.toIso)}` : sql``}
    SELECT market, date_bin(interval '1 minute', created_at, timestamptz 'epoch') AS minute_at,
      min(seq) AS first_seq,
      ((min(ARRAY[seq::numeric, price]))[2])::text AS open,
      max(seq) AS last_seq,
      ((max(ARRAY[seq::numeric, price]))[2])::text AS last,
      max(price)::text AS high,
      min(price)::text AS low,
      sum(size)::text AS base,
      sum(price * size)::text AS quote,
      count(DISTINCT seq)::int4 AS trades
    FROM fills
    WHERE seq >= greatest(${seqBound(sql, 'w')}, ${(r.afterSeq ?? -1) + 1}::int8) AND seq <= ${r.upToSeq}::int8
      AND role = 'taker' AND created_at >= ${r.fromIso}::timestamptz
      ${r.toIso !== undefined ? sql`AND seq < ${seqBound(sql, 'e')} AND created_at < ${r.toIso}::timestamptz` : sql``}
    GROUP BY 1, 2`;
}
