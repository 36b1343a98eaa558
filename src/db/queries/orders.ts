// Orders (engine mirror). Newest first by created_seq, then order_id; cursor `before` = created_seq.
// Names the 0014 columns, so callers read it with `needsV2`.
// Indexes: (created_seq desc), (party, created_seq desc), (market, created_seq desc),
// (status, created_seq desc), (party, status).
import type { Queryable } from '../database.js';
import { keyedPage, type Page } from './page.js';

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

export const ORDER_COLUMNS = [
  'order_id', 'party', 'market', 'side', 'type', 'tif', 'price', 'size', 'filled_size', 'avg_price', 'status',
  'client_order_id', 'reduce_only', 'tp_trigger_price', 'tp_limit_price', 'tp_size', 'sl_trigger_price',
  'sl_limit_price', 'sl_size', 'created_seq', 'updated_seq', 'created_at', 'updated_at',
];

export interface OrderFilter {
  party?: string | undefined;
  market?: string | undefined;
  /** One status, or several (the non-terminal pair for the live merge). */
  statuses?: readonly OrderStatus[] | undefined;
  before?: number | undefined;
  limit: number;
}

export function listOrders(sql: Queryable, f: OrderFilter): Promise<Page<OrderRow>> {
  const filters = sql`
    ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}
    ${f.statuses === undefined ? sql`` : f.statuses.length === 1 ? sql`AND status = ${f.statuses[0]!}` : sql`AND status IN ${sql(f.statuses as string[])}`}`;
  return keyedPage(f.limit, (r) => r.createdSeq, {
    first: (n) => sql<OrderRow[]>`
      SELECT ${sql(ORDER_COLUMNS)} FROM orders
      WHERE true ${filters} ${f.before !== undefined ? sql`AND created_seq < ${f.before}` : sql``}
      ORDER BY created_seq DESC, order_id LIMIT ${n}`,
    sameKey: (seq) => sql<OrderRow[]>`
      SELECT ${sql(ORDER_COLUMNS)} FROM orders WHERE created_seq = ${seq} ${filters} ORDER BY order_id`,
    beyond: async (seq) => (await sql`SELECT 1 FROM orders WHERE created_seq < ${seq} ${filters} ORDER BY created_seq DESC LIMIT 1`).length > 0,
  });
}

/** Which of these order ids the mirror has (pk lookups). */
export async function existingOrderIds(sql: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ orderId: string }[]>`SELECT order_id FROM orders WHERE order_id IN ${sql(ids as string[])}`;
  return new Set(rows.map((r) => r.orderId));
}
