// Fills (engine mirror): one row per leg of an `engine.order_filled` event. Newest event first,
// legs of one event in leg order; cursor `before` = seq; a page never splits an event's legs.
// Indexes: pk (seq, leg), (party, seq desc), (market, seq desc), (party, market, seq desc).
import type { Queryable } from '../database.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import type { RowCache } from '../json/row-cache.js';
import { keyedJsonPage, keyedPage, rowVersions, type Page, type PageQueries, type Select } from './page.js';

export interface FillRow {
  fillId: string;
  seq: number;
  leg: number;
  matchId: string;
  orderId: string;
  party: string;
  market: string;
  side: string;
  role: 'taker' | 'maker';
  size: string;
  price: string;
  fee: string;
  realizedPnl: string;
  newBalance: string;
  positionId: string;
  createdAt: string;
}

/** The columns in wire order (the Fill schema's), with how each is written as JSON. */
export const FILL_SHAPE = rowShape([
  ['fill_id', 'text'], ['seq', 'int'], ['leg', 'int'], ['match_id', 'text'], ['order_id', 'text'], ['party', 'text'],
  ['market', 'text'], ['side', 'text'], ['role', 'text'], ['size', 'decimal'], ['price', 'decimal'], ['fee', 'decimal'],
  ['realized_pnl', 'decimal'], ['new_balance', 'decimal'], ['position_id', 'text'], ['created_at', 'time'],
]);
const COLUMNS = FILL_SHAPE.columns;
/** A fill leg never changes once written: its JSON is kept by version (page.ts rowVersions). */
const FILL_VERSIONS = rowVersions('fills', ['seq', 'leg'], FILL_SHAPE);

export interface FillFilter {
  party?: string | undefined;
  market?: string | undefined;
  before?: number | undefined;
  limit: number;
}

function fillQueries(sql: Queryable, f: FillFilter, select: Select = sql(COLUMNS)): PageQueries<FillRow> {
  const filters = sql`
    ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}`;
  return {
    first: (n) => sql<FillRow[]>`
      SELECT ${select} FROM fills
      WHERE true ${filters} ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
      ORDER BY seq DESC, leg LIMIT ${n}`,
    sameKey: (seq) => sql<FillRow[]>`SELECT ${select} FROM fills WHERE seq = ${seq} ${filters} ORDER BY leg`,
    beyond: async (seq) => (await sql`SELECT 1 FROM fills WHERE seq < ${seq} ${filters} ORDER BY seq DESC LIMIT 1`).length > 0,
  };
}

export function listFills(sql: Queryable, f: FillFilter): Promise<Page<FillRow>> {
  return keyedPage(f.limit, (r) => r.seq, fillQueries(sql, f));
}

/** The same page as `listFills`, written as the route's JSON body (rows kept in `cache` reused). */
export function listFillsJson(sql: Queryable, f: FillFilter, cache?: RowCache): Promise<JsonBody> {
  return keyedJsonPage(sql, f.limit, FILL_SHAPE, 'seq', (select) => fillQueries(sql, f, select), cache && { cache, versions: FILL_VERSIONS });
}

export interface Balance {
  balance: string;
  asOfSeq: number | null;
}

/** `new_balance` of the party's fill with the greatest (seq, leg); zero and null without a fill. */
export async function balanceOf(sql: Queryable, party: string): Promise<Balance> {
  const rows = await sql<{ newBalance: string; seq: number }[]>`
    SELECT new_balance, seq FROM fills WHERE party = ${party} ORDER BY seq DESC, leg DESC LIMIT 1`;
  const row = rows[0];
  return row ? { balance: row.newBalance, asOfSeq: row.seq } : { balance: '0.0000000000', asOfSeq: null };
}
