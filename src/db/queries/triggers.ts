// Take-profit/stop-loss triggers of one party (engine mirror). Newest first by created_seq, then
// trigger_id; cursor `before` = created_seq. Names 0014/0015 columns: read with `needsV2`.
// Index: (party, created_seq desc).
import type { Queryable } from '../database.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import { keyedJsonPage, keyedPage, type Page, type PageQueries, type Select } from './page.js';

export const TRIGGER_STATUSES = ['armed', 'cancelled', 'fired'] as const;

export interface TriggerRow {
  triggerId: string;
  party: string;
  market: string;
  kind: 'tp' | 'sl';
  status: (typeof TRIGGER_STATUSES)[number];
  triggerPrice: string;
  limitPrice: string | null;
  size: string | null;
  firedSize: string | null;
  firedLimit: string | null;
  positionId: string | null;
  parentOrderId: string | null;
  firedOrderId: string | null;
  createdSeq: number;
  updatedSeq: number;
  createdAt: string;
  updatedAt: string;
}

/** The columns in wire order (the Trigger schema's), with how each is written as JSON. */
export const TRIGGER_SHAPE = rowShape([
  ['trigger_id', 'text'], ['party', 'text'], ['market', 'text'], ['kind', 'text'], ['status', 'text'],
  ['trigger_price', 'decimal'], ['limit_price', 'decimal'], ['size', 'decimal'], ['fired_size', 'decimal'],
  ['fired_limit', 'decimal'], ['position_id', 'text'], ['parent_order_id', 'text'], ['fired_order_id', 'text'],
  ['created_seq', 'int'], ['updated_seq', 'int'], ['created_at', 'time'], ['updated_at', 'time'],
]);
const COLUMNS = TRIGGER_SHAPE.columns;

export interface TriggerFilter {
  party: string;
  market?: string | undefined;
  status?: string | undefined;
  before?: number | undefined;
  limit: number;
}

function listTriggersQueries(sql: Queryable, f: TriggerFilter, select: Select = sql(COLUMNS)): PageQueries<TriggerRow> {
  const filters = sql`
    party = ${f.party}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}
    ${f.status !== undefined ? sql`AND status = ${f.status}` : sql``}`;
  return {
    first: (n) => sql<TriggerRow[]>`
      SELECT ${select} FROM triggers
      WHERE ${filters} ${f.before !== undefined ? sql`AND created_seq < ${f.before}` : sql``}
      ORDER BY created_seq DESC, trigger_id LIMIT ${n}`,
    sameKey: (seq) => sql<TriggerRow[]>`
      SELECT ${select} FROM triggers WHERE ${filters} AND created_seq = ${seq} ORDER BY trigger_id`,
    beyond: async (seq) => (await sql`SELECT 1 FROM triggers WHERE ${filters} AND created_seq < ${seq} ORDER BY created_seq DESC LIMIT 1`).length > 0,
  };
}

export function listTriggers(sql: Queryable, f: TriggerFilter): Promise<Page<TriggerRow>> {
  return keyedPage(f.limit, (r) => r.createdSeq, listTriggersQueries(sql, f));
}

/** The same page as `listTriggers`, written as the route's JSON body. */
export function listTriggersJson(sql: Queryable, f: TriggerFilter): Promise<JsonBody> {
  return keyedJsonPage(sql, f.limit, TRIGGER_SHAPE, 'created_seq', (select) => listTriggersQueries(sql, f, select));
}
