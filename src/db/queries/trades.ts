// Public trades (GET /v1/trades, docs/rest.md "Trades"): one record per match, read from the
// taker legs of `fills` through the (market, seq desc) index — newest first, `before` a seq. A
// match whose taker flipped through zero has two taker legs (same seq, side and price): they are
// one trade with the summed size.
import type { Queryable } from '../database.js';
import { formatDecimal, parseDecimal } from '../../decimal.js';
import type { Page } from './page.js';
import { toEnvelope, type EventRow } from './events.js';
import type { EngineEvent } from '../../contracts/engine-event.js';

export interface TradeRow {
  seq: number;
  matchId: string;
  market: string;
  side: 'buy' | 'sell';
  price: string;
  size: string;
  createdAt: string;
}

interface TakerLeg {
  seq: number;
  matchId: string;
  market: string;
  side: 'buy' | 'sell';
  price: string;
  size: string;
  createdAt: string;
}

export async function listTrades(sql: Queryable, f: { market: string; before?: number | undefined; limit: number }): Promise<Page<TradeRow>> {
  // At most two taker legs per match: 2 × limit + 2 rows hold `limit` whole matches and show whether more exist.
  const take = 2 * f.limit + 2;
  const rows = await sql<TakerLeg[]>`
    SELECT seq, match_id, market, side, price, size, created_at FROM fills
    WHERE market = ${f.market} AND role = 'taker' ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC, leg LIMIT ${take}`;
  const trades: TradeRow[] = [];
  for (const r of rows) {
    const last = trades.at(-1);
    if (last && last.seq === r.seq) {
      last.size = formatDecimal(parseDecimal(last.size) + parseDecimal(r.size));
      continue;
    }
    trades.push({ seq: r.seq, matchId: r.matchId, market: r.market, side: r.side, price: formatDecimal(parseDecimal(r.price)), size: formatDecimal(parseDecimal(r.size)), createdAt: r.createdAt });
  }
  const more = trades.length > f.limit || rows.length === take;
  const items = trades.slice(0, f.limit);
  return { items, nextCursor: more && items.length > 0 ? items.at(-1)!.seq : null };
}

export interface LastTradeRow {
  market: string;
  seq: number;
  price: string;
  createdAt: string;
}

/**
 * Each market's latest match, whatever its age (GET /v1/markets `lastTrade`): one backward step of
 * the (market, seq desc) index per market (every fill event has a taker leg near the top).
 */
export async function lastTrades(sql: Queryable, markets: readonly string[]): Promise<LastTradeRow[]> {
  const rows = await Promise.all(
    markets.map((market) => sql<LastTradeRow[]>`
      SELECT market, seq, price, created_at FROM fills WHERE market = ${market} AND role = 'taker' ORDER BY seq DESC LIMIT 1`),
  );
  return rows.flat();
}

/**
 * The fill events of a market's last `n` matches at or below `upTo`, oldest first, as the engine
 * sent them (the trade tape's seed, src/stream/recent-trades.ts, builds its frames with the live
 * projection from them). The seqs come from the taker legs along the (market, seq desc) index (at
 * most two per match), each event by its primary key.
 */
export async function lastMatchEvents(sql: Queryable, market: string, upTo: number, n: number): Promise<EngineEvent[]> {
  const rows = await sql<EventRow[]>`
    SELECT seq, kind, ts, market, party, payload FROM events
    WHERE kind = 'engine.order_filled' AND seq IN (
      SELECT seq FROM fills WHERE market = ${market} AND role = 'taker' AND seq <= ${upTo} ORDER BY seq DESC LIMIT ${2 * n + 2})
    ORDER BY seq DESC LIMIT ${n}`;
  return rows.reverse().map(toEnvelope);
}
