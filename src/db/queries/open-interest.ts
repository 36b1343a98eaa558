// Open interest per market (GET /v1/markets `openInterest`): the size held long by all open
// position epochs of the mirror, which equals the size held short (every match adds or removes the
// same size on both sides). One grouped scan of the open epochs.
import type { Queryable } from '../database.js';

export interface OpenInterestRow {
  market: string;
  openInterest: string;
}

export function openInterestRows(sql: Queryable): Promise<OpenInterestRow[]> {
  return sql<OpenInterestRow[]>`
    SELECT market, sum(size)::text AS open_interest FROM positions WHERE status = 'open' AND size > 0 GROUP BY market`;
}
