// Rebuilding the open candle buckets at start (stream projections): the matches of the current
// UTC week (Monday 00:00 on: the 1w bucket, the longest), read from the indexer's `fills` table.
//
// One match is one seq (one engine.order_filled event); its taker legs add up to the match size
// (a flip has two), so legs are summed per seq. The walk goes backwards along the primary key
// (seq, leg) in pages and stops at the first row older than the day, so it reads only that day's
// fills, never the whole table; `maxRows` bounds it on a very busy day (older matches of the day
// are then missing from the 4h/1d bars, and this is logged). Every statement is bounded by the
// database deadline, so a database that stops answering cannot hold the stream's start.
import type { Database, Queryable } from '../database.js';
import { parseDecimal } from '../../decimal.js';

/** One match of the day, as read for the seed (live.ts hands these to the candle projection, whose CandleTrade has this shape). */
export interface SeedTrade {
  market: string;
  tsMs: number;
  price: bigint;
  size: bigint;
  /** price in wire form. */
  priceText?: string;
  /** Seq of the match. */
  seq?: number;
}

export interface CandleSeed {
  /** Newest seq in `events`: the stream resumes after it. null for an empty mirror. */
  maxSeq: number | null;
  /** ts of that event, in ms: engine time "now" for closing buckets. */
  nowMs: number | null;
  /** Matches from the start of nowMs's week (Monday 00:00 UTC: the longest open bucket, 1w) up to maxSeq, oldest first. */
  trades: SeedTrade[];
  truncated: boolean;
}

/** The week's buckets start on Mondays 00:00 UTC (src/projections/candles.ts INTERVAL_ORIGIN_MS). */
const WEEK_MS = 604_800_000;
const WEEK_ORIGIN_MS = 345_600_000;
const PAGE = 5_000;

/** The newest event's seq and ts at or below `upTo` (pk, backwards, one row); null for an empty mirror. */
export async function eventsHead(sql: Queryable, upTo: number | null = null): Promise<{ seq: number; ts: string } | null> {
  const rows =
    upTo === null
      ? await sql<{ seq: number; ts: string }[]>`SELECT seq, ts FROM events ORDER BY seq DESC LIMIT 1`
      : await sql<{ seq: number; ts: string }[]>`SELECT seq, ts FROM events WHERE seq <= ${upTo} ORDER BY seq DESC LIMIT 1`;
  return rows[0] ?? null;
}

export interface TakerLegRow {
  seq: number;
  market: string;
  price: string;
  size: string;
  createdAt: string;
}

/** Up to `limit` taker legs below seq `before`, newest first (pk (seq, leg) backwards). */
export function takerLegsBefore(sql: Queryable, before: number, limit: number): Promise<TakerLegRow[]> {
  return sql<TakerLegRow[]>`
    SELECT seq, market, price::text AS price, size::text AS size, created_at
    FROM fills WHERE seq < ${before} AND role = 'taker'
    ORDER BY seq DESC, leg DESC LIMIT ${limit}`;
}

/**
 * Each statement runs through `db.run`, so each is bounded by the one database deadline. `upTo`: the
 * seed stops at that seq (a replica with JetStream replays what follows from the stream).
 */
export async function loadCandleSeed(db: Pick<Database, 'run'>, maxRows = 500_000, upTo: number | null = null): Promise<CandleSeed> {
  const top = await db.run((sql) => eventsHead(sql, upTo));
  if (!top) return { maxSeq: null, nowMs: null, trades: [], truncated: false };
  const maxSeq = top.seq;
  const nowMs = new Date(top.ts).getTime();
  // Every interval's open bucket starts within the current week's (the longest), so the seed reads from there.
  const dayStart = Math.floor((nowMs - WEEK_ORIGIN_MS) / WEEK_MS) * WEEK_MS + WEEK_ORIGIN_MS;

  const bySeq = new Map<number, SeedTrade>();
  let before = maxSeq + 1;
  let read = 0;
  let truncated = false;
  outer: for (;;) {
    const from = before;
    const rows = await db.run((sql) => takerLegsBefore(sql, from, PAGE));
    for (const r of rows) {
      const seq = r.seq;
      const tsMs = new Date(r.createdAt).getTime();
      if (tsMs < dayStart) break outer;
      const t = bySeq.get(seq);
      if (t) t.size += parseDecimal(r.size);
      else bySeq.set(seq, { seq, market: r.market, tsMs, price: parseDecimal(r.price), size: parseDecimal(r.size) });
      before = seq;
    }
    read += rows.length;
    if (rows.length < PAGE) break;
    if (read >= maxRows) {
      truncated = true;
      break;
    }
  }
  const trades = [...bySeq.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => t);
  return { maxSeq, nowMs, trades, truncated };
}
