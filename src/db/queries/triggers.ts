// Take-profit/stop-loss triggers of one party (engine mirror). Newest first by created_seq, then
// trigger_id; cursor `before` = created_seq. Names 0014/0015 columns: read with `needsV2`.
// Index: (party, created_seq desc).
import type { Queryable } from '../database.js';
import { keyedPage, type Page } from './page.js';

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

const COLUMNS = [
  'trigger_id', 'party', 'market', 'kind', 'status', 'trigger_price', 'limit_price', 'size', 'fired_size', 'fired_limit',
  'position_id', 'parent_order_id', 'fired_order_id', 'created_seq', 'updated_seq', 'created_at', 'updated_at',
];

export interface TriggerFilter {
  party: string;
  market?: string | undefined;
  status?: string | undefined;
  before?: number | undefined;
  limit: number;
}

export function listTriggers(sql: Queryable, f: TriggerFilter): Promise<Page<TriggerRow>> {
  const filters = sql`
    party = ${f.party}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}
    ${f.status !== undefined ? sql`AND status = ${f.status}` : sql``}`;
  return keyedPage(f.limit, (r) => r.createdSeq, {
    first: (n) => sql<TriggerRow[]>`
      SELECT ${sql(COLUMNS)} FROM triggers
      WHERE ${filters} ${f.before !== undefined ? sql`AND created_seq < ${f.before}` : sql``}
      ORDER BY created_seq DESC, trigger_id LIMIT ${n}`,
    sameKey: (seq) => sql<TriggerRow[]>`
      SELECT ${sql(COLUMNS)} FROM triggers WHERE ${filters} AND created_seq = ${seq} ORDER BY trigger_id`,
    beyond: async (seq) => (await sql`SELECT 1 FROM triggers WHERE ${filters} AND created_seq < ${seq} ORDER BY created_seq DESC LIMIT 1`).length > 0,
  });
}
