// A party's trade history (GET /v1/users/:party/trade-history, docs/rest.md "Trade history"): its
// fill legs, newest first, each with the leg's realized PnL (the change of its epoch's realized
// PnL: the engine's `round((p − e0) × q × dir)` for a reducing leg, 0 for an opening one) and the
// party's cumulative realized PnL and fees up to and including that leg, over all its markets.
// Exact: PostgreSQL numeric arithmetic on numeric(38,10), rendered with 10 places. The running sums
// are window functions over the party's legs (index fills (party, seq desc)); a page is the newest
// `limit` legs below `before`, extended by the other legs of its last seq (docs/rest.md paging).
import type { Queryable } from '../database.js';
import type { Page } from './page.js';

export interface TradeHistoryRow {
  seq: number;
  leg: number;
  matchId: string;
  orderId: string;
  market: string;
  side: 'buy' | 'sell';
  role: 'taker' | 'maker';
  size: string;
  price: string;
  fee: string;
  realizedPnl: string;
  cumulativeRealizedPnl: string;
  cumulativeFees: string;
  positionId: string;
  createdAt: string;
}

export async function listTradeHistory(sql: Queryable, f: { party: string; market?: string | undefined; before?: number | undefined; limit: number }): Promise<Page<TradeHistoryRow>> {
  const rows = await sql<Array<TradeHistoryRow & { createdAt: Date }>>`
    WITH legs AS (
      SELECT seq, leg, match_id, order_id, market, side, role, size, price, fee, position_id, created_at,
        realized_pnl - coalesce(lag(realized_pnl) OVER (PARTITION BY position_id ORDER BY seq, leg), 0) AS pnl
      FROM fills WHERE party = ${f.party}
    ), running AS (
      SELECT *, sum(pnl) OVER w AS cum_pnl, sum(fee) OVER w AS cum_fees FROM legs
      WINDOW w AS (ORDER BY seq, leg ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    )
    SELECT seq::int8 AS seq, leg, match_id, order_id, market, side, role, size::text AS size, price::text AS price, fee::text AS fee,
      round(pnl, 10)::text AS realized_pnl, round(cum_pnl, 10)::text AS cumulative_realized_pnl, round(cum_fees, 10)::text AS cumulative_fees,
      position_id, created_at
    FROM running
    WHERE true ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``} ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC, leg LIMIT ${f.limit + 8}`;
  // Whole seqs only: the page ends after the last leg of its `limit`-th row's seq.
  let end = Math.min(rows.length, f.limit);
  while (end > 0 && end < rows.length && Number(rows[end]!.seq) === Number(rows[end - 1]!.seq)) end++;
  const items = rows.slice(0, end).map((r) => ({ ...r, seq: Number(r.seq), createdAt: new Date(r.createdAt).toISOString() }));
  const more = rows.length > end;
  return { items, nextCursor: more && items.length > 0 ? items[items.length - 1]!.seq : null };
}
