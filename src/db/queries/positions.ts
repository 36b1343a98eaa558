// Position epochs of one party (engine mirror). Newest change first by updated_seq, then
// position_id; cursor `before` = updated_seq. A flip closes one epoch and opens another in the same
// event (same updated_seq): the page rule keeps them together.
// `status`: open (default) | closed (archived epochs) | all.
// Indexes: (party, status, updated_seq desc) for open/closed, (party, updated_seq desc) for all.
import type { Queryable } from '../database.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import { keyedJsonPage, keyedPage, type Page, type PageQueries, type Select } from './page.js';

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

/** The columns in wire order (the Position schema's), with how each is written as JSON. */
export const POSITION_SHAPE = rowShape([
  ['position_id', 'text'], ['party', 'text'], ['market', 'text'], ['size', 'decimal'], ['entry_price', 'decimal'],
  ['realized_pnl', 'decimal'], ['status', 'text'], ['opened_seq', 'int'], ['updated_seq', 'int'], ['closed_seq', 'int'],
  ['opened_at', 'time'], ['updated_at', 'time'], ['closed_at', 'time'],
]);
const COLUMNS = POSITION_SHAPE.columns;

export interface PositionFilter {
  party: string;
  status: (typeof POSITION_STATUSES)[number];
  market?: string | undefined;
  before?: number | undefined;
  limit: number;
}

function listPositionsQueries(sql: Queryable, f: PositionFilter, select: Select = sql(COLUMNS)): PageQueries<PositionRow> {
  const filters = sql`
    party = ${f.party}
    ${f.status !== 'all' ? sql`AND status = ${f.status}` : sql``}
    ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}`;
  return {
    first: (n) => sql<PositionRow[]>`
      SELECT ${select} FROM positions
      WHERE ${filters} ${f.before !== undefined ? sql`AND updated_seq < ${f.before}` : sql``}
      ORDER BY updated_seq DESC, position_id LIMIT ${n}`,
    sameKey: (seq) => sql<PositionRow[]>`
      SELECT ${select} FROM positions WHERE ${filters} AND updated_seq = ${seq} ORDER BY position_id`,
    beyond: async (seq) => (await sql`SELECT 1 FROM positions WHERE ${filters} AND updated_seq < ${seq} ORDER BY updated_seq DESC LIMIT 1`).length > 0,
  };
}

export function listPositions(sql: Queryable, f: PositionFilter): Promise<Page<PositionRow>> {
  return keyedPage(f.limit, (r) => r.updatedSeq, listPositionsQueries(sql, f));
}

/** The same page as `listPositions`, written as the route's JSON body. */
export function listPositionsJson(sql: Queryable, f: PositionFilter): Promise<JsonBody> {
  return keyedJsonPage(sql, f.limit, POSITION_SHAPE, 'updated_seq', (select) => listPositionsQueries(sql, f, select));
}
