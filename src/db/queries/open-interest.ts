// Open interest per market (GET /v1/markets `openInterest`): the size held long by all open
// position epochs of the mirror, which equals the size held short (every match adds or removes the
// same size on both sides). One grouped scan of the open epochs.
import type { Queryable } from '../database.js';
import type { EngineEvent } from '../../contracts/engine-event.js';
import { eventsAfter } from './events.js';

export interface OpenInterestRow {
  market: string;
  openInterest: string;
}

export function openInterestRows(sql: Queryable): Promise<OpenInterestRow[]> {
  return sql<OpenInterestRow[]>`
    SELECT market, sum(size)::text AS open_interest FROM positions WHERE status = 'open' AND size > 0 GROUP BY market`;
}

/** The open long epochs of every market as of `asOfSeq`, the newest event of the same snapshot (null: no event yet). */
export interface OpenInterestSeed {
  asOfSeq: number | null;
  longs: { market: string; positionId: string; size: string }[];
  /** The event at `asOfSeq` as the mirror holds it: which history the seed is of (a catch-up compares it). */
  asOf?: EngineEvent | null;
}

/**
 * The live open interest's seed (src/stream/open-interest-feed.ts): the epochs the REST figure
 * sums, one by one, so that fill legs can then move each. Run it with Database.readSnapshot: the
 * indexer writes each event and its positions in one transaction, so the epochs are exactly the
 * engine's after `asOfSeq`.
 */
export async function loadOpenInterestSeed(tx: Queryable): Promise<OpenInterestSeed> {
  const [head] = await tx<{ seq: string | number | null }[]>`SELECT max(seq) AS seq FROM events`;
  const longs = await tx<{ market: string; positionId: string; size: string }[]>`
    SELECT market, position_id, size::text AS size FROM positions WHERE status = 'open' AND size > 0`;
  const asOfSeq = head?.seq === null || head?.seq === undefined ? null : Number(head.seq);
  const [asOf] = asOfSeq === null ? [] : await eventsAfter(tx, asOfSeq - 1, 1);
  return { asOfSeq, longs, asOf: asOf ?? null };
}
