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

export interface MarketStatsRow {
  market: string;
  open: string;
  high: string;
  low: string;
  last: string;
  baseVolume: string;
  /** Σ price × size, rounded half away from zero to 10 places. */
  quoteVolume: string;
  trades: number;
}

export interface WindowStats {
  /** Markets with at least one match in the window; the others had none. */
  byMarket: Map<string, MarketStatsRow>;
  /** Newest seq of the mirror when read (null for an empty mirror): what the figures are current as of. */
  headSeq: number | null;
}

/**
 * Statistics of every market over the matches created at or after `fromIso`: first and last price
 * by seq, high, low, base and quote volume, match count. One statement.
 */
export async function statsSince(sql: Queryable, fromIso: string): Promise<WindowStats> {
  const [rows, head] = await Promise.all([
    // One pass over the window's taker legs, no per-match grouping: a match's taker legs share its
    // seq, price and time and their sizes add up to its size, so sums and extremes over legs equal
    // those over matches; open/last are the price of the smallest/greatest seq; a match is a
    // distinct seq. Both seq bounds are given: with two the planner estimates a narrow range and
    // walks the pk; with one it guesses a third of the table and scans all of it.
    sql<MarketStatsRow[]>`
      WITH RECURSIVE ${seqSearch(sql, 'w', fromIso)}
      SELECT market,
        ((min(ARRAY[seq::numeric, price]))[2])::text AS open,
        max(price)::text AS high,
        min(price)::text AS low,
        ((max(ARRAY[seq::numeric, price]))[2])::text AS last,
        sum(size)::text AS base_volume,
        round(sum(price * size), 10)::text AS quote_volume,
        count(DISTINCT seq)::int4 AS trades
      FROM fills
      WHERE seq >= ${seqBound(sql, 'w')} AND seq <= (SELECT seq FROM fills ORDER BY seq DESC LIMIT 1)
        AND role = 'taker' AND created_at >= ${fromIso}::timestamptz
      GROUP BY market`,
    sql<{ seq: number }[]>`SELECT seq FROM events ORDER BY seq DESC LIMIT 1`,
  ]);
  return { byMarket: new Map(rows.map((r) => [r.market, r])), headSeq: head[0]?.seq ?? null };
}
