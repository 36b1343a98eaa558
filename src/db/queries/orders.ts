// Orders (engine mirror). Newest first by created_seq, then order_id; cursor `before` = created_seq.
// Names the 0014 columns, so callers read it with `needsV2`.
// Indexes: (created_seq desc), (party, created_seq desc), (market, created_seq desc),
// (status, created_seq desc), (party, status).
import type { Queryable } from '../database.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import { keyedJsonPage, keyedPage, type Page, type PageQueries, type Select } from './page.js';

export const ORDER_STATUSES = ['open', 'partially_filled', 'filled', 'cancelled', 'rejected'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const NON_TERMINAL: readonly OrderStatus[] = ['open', 'partially_filled'];

export interface OrderRow {
  orderId: string;
  party: string;
  market: string;
  side: string;
  type: string;
  tif: string;
  price: string | null;
  size: string;
  filledSize: string;
  avgPrice: string | null;
  status: OrderStatus;
  clientOrderId: string | null;
  reduceOnly: boolean;
  tpTriggerPrice: string | null;
  tpLimitPrice: string | null;
  tpSize: string | null;
  slTriggerPrice: string | null;
  slLimitPrice: string | null;
  slSize: string | null;
  createdSeq: number;
  updatedSeq: number;
  createdAt: string;
  updatedAt: string;
}

/** The columns in wire order (the Order schema's), with how each is written as JSON. */
export const ORDER_SHAPE = rowShape([
  ['order_id', 'text'], ['party', 'text'], ['market', 'text'], ['side', 'text'], ['type', 'text'], ['tif', 'text'],
  ['price', 'decimal'], ['size', 'decimal'], ['filled_size', 'decimal'], ['avg_price', 'decimal'], ['status', 'text'],
  ['client_order_id', 'text'], ['reduce_only', 'bool'], ['tp_trigger_price', 'decimal'], ['tp_limit_price', 'decimal'],
  ['tp_size', 'decimal'], ['sl_trigger_price', 'decimal'], ['sl_limit_price', 'decimal'], ['sl_size', 'decimal'],
  ['created_seq', 'int'], ['updated_seq', 'int'], ['created_at', 'time'], ['updated_at', 'time'],
]);
export const ORDER_COLUMNS = ORDER_SHAPE.columns;

export interface OrderFilter {
  party?: string | undefined;
  market?: string | undefined;
  /** One status, or several (the non-terminal pair for the live merge). */
  statuses?: readonly OrderStatus[] | undefined;
  before?: number | undefined;
  limit: number;
}

function listOrdersQueries(sql: Queryable, f: OrderFilter, select: Select = sql(ORDER_COLUMNS)): PageQueries<OrderRow> {
  const filters = sql`
    ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}
    ${f.statuses === undefined ? sql`` : f.statuses.length === 1 ? sql`AND status = ${f.statuses[0]!}` : sql`AND status IN ${sql(f.statuses as string[])}`}`;
  return {
    first: (n) => sql<OrderRow[]>`
      SELECT ${select} FROM orders
      WHERE true ${filters} ${f.before !== undefined ? sql`AND created_seq < ${f.before}` : sql``}
      ORDER BY created_seq DESC, order_id LIMIT ${n}`,
    sameKey: (seq) => sql<OrderRow[]>`
      SELECT ${select} FROM orders WHERE created_seq = ${seq} ${filters} ORDER BY order_id`,
    beyond: async (seq) => (await sql`SELECT 1 FROM orders WHERE created_seq < ${seq} ${filters} ORDER BY created_seq DESC LIMIT 1`).length > 0,
  };
}

export function listOrders(sql: Queryable, f: OrderFilter): Promise<Page<OrderRow>> {
  return keyedPage(f.limit, (r) => r.createdSeq, listOrdersQueries(sql, f));
}

/** The same page as `listOrders`, written as the route's JSON body. */
export function listOrdersJson(sql: Queryable, f: OrderFilter): Promise<JsonBody> {
  return keyedJsonPage(sql, f.limit, ORDER_SHAPE, 'created_seq', (select) => listOrdersQueries(sql, f, select));
}

/** Which of these order ids the mirror has (pk lookups). */
export async function existingOrderIds(sql: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ orderId: string }[]>`SELECT order_id FROM orders WHERE order_id IN ${sql(ids as string[])}`;
  return new Set(rows.map((r) => r.orderId));
}

/** The party's newest order carrying this client order id (the mirror, for ids the live path no longer holds). */
export async function orderByClientId(sql: Queryable, party: string, clientOrderId: string): Promise<OrderRow | null> {
  const rows = await sql<OrderRow[]>`
    SELECT ${sql(ORDER_COLUMNS)} FROM orders
    WHERE party = ${party} AND client_order_id = ${clientOrderId}
    ORDER BY created_seq DESC LIMIT 1`;
  return rows[0] ?? null;
}
