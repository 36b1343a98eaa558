// Position epochs of one party (engine mirror). Newest change first by updated_seq, then
// position_id; cursor `before` = updated_seq. A flip closes one epoch and opens another in the same
// event (same updated_seq): the page rule keeps them together.
// `status`: open (default) | closed (archived epochs) | all.
// Indexes: (party, status, updated_seq desc) for open/closed, (party, updated_seq desc) for all.
import type { Queryable } from '../database.js';
import { keyedPage, type Page } from './page.js';

export const POSITION_STATUSES = ['open', 'closed', 'all'] as const;

export interface PositionRow {
  positionId: string;
  party: string;
  market: string;
  size: string;
  entryPrice: string;
  realizedPnl: string;
  status: 'open' | 'closed';
  openedSeq: number;
  updatedSeq: number;
  closedSeq: number | null;
  openedAt: string;
  updatedAt: string;
  closedAt: string | null;
}

const COLUMNS = [
  'position_id', 'party', 'market', 'size', 'entry_price', 'realized_pnl', 'status', 'opened_seq', 'updated_seq',
  'closed_seq', 'opened_at', 'updated_at', 'closed_at',
];

export interface PositionFilter {
  party: string;
  status: (typeof POSITION_STATUSES)[number];
  market?: string | undefined;
  before?: number | undefined;
  limit: number;
}

export function listPositions(sql: Queryable, f: PositionFilter): Promise<Page<PositionRow>> {
  const filters = sql`
    party = ${f.party}
    ${f.status !== 'all' ? sql`AND status = ${f.status}` : sql``}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}`;
  return keyedPage(f.limit, (r) => r.updatedSeq, {
    first: (n) => sql<PositionRow[]>`
      SELECT ${sql(COLUMNS)} FROM positions
      WHERE ${filters} ${f.before !== undefined ? sql`AND updated_seq < ${f.before}` : sql``}
      ORDER BY updated_seq DESC, position_id LIMIT ${n}`,
    sameKey: (seq) => sql<PositionRow[]>`
      SELECT ${sql(COLUMNS)} FROM positions WHERE ${filters} AND updated_seq = ${seq} ORDER BY position_id`,
    beyond: async (seq) => (await sql`SELECT 1 FROM positions WHERE ${filters} AND updated_seq < ${seq} ORDER BY updated_seq DESC LIMIT 1`).length > 0,
  });
}
