// Rebuilding the open candle buckets at start (stream projections): the matches of the current
// UTC day, read from the indexer's `fills` table.
//
// One match is one seq (one engine.order_filled event); its taker legs add up to the match size
// (a flip has two), so legs are summed per seq. The walk goes backwards along the primary key
// (seq, leg) in pages and stops at the first row older than the day, so it reads only that day's
// fills, never the whole table; `maxRows` bounds it on a very busy day (older matches of the day
// are then missing from the 4h/1d bars, and this is logged).
import type { Sql } from '../database.js';
import { parseDecimal } from '../../projections/decimal.js';
import type { CandleTrade } from '../../projections/candles.js';

export interface CandleSeed {
  /** Newest seq in `events`: the stream resumes after it. null for an empty mirror. */
  maxSeq: number | null;
  /** ts of that event, in ms: engine time "now" for closing buckets. */
  nowMs: number | null;
  /** Matches from the start of nowMs's UTC day up to maxSeq, oldest first. */
  trades: CandleTrade[];
  truncated: boolean;
}

const DAY_MS = 86_400_000;
const PAGE = 5_000;

export async function loadCandleSeed(sql: Sql, maxRows = 500_000): Promise<CandleSeed> {
  const head = await sql<{ seq: number; ts: string }[]>`SELECT seq, ts FROM events ORDER BY seq DESC LIMIT 1`;
  const top = head[0];
  if (!top) return { maxSeq: null, nowMs: null, trades: [], truncated: false };
  // Number()/new Date() also accept a driver without the gateway's int8 and timestamptz parsers.
  const maxSeq = Number(top.seq);
  const nowMs = new Date(top.ts).getTime();
  const dayStart = Math.floor(nowMs / DAY_MS) * DAY_MS;

  const bySeq = new Map<number, CandleTrade>();
  let before = maxSeq + 1;
  let read = 0;
  let truncated = false;
  outer: for (;;) {
    const rows = await sql<{ seq: number; market: string; price: string; size: string; createdAt: string }[]>`
      SELECT seq, market, price::text AS price, size::text AS size, created_at
      FROM fills WHERE seq < ${before} AND role = 'taker'
      ORDER BY seq DESC, leg DESC LIMIT ${PAGE}`;
    for (const r of rows) {
      const seq = Number(r.seq);
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
