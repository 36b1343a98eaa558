// Batch manifests and user batches as the chain recorded them.
//   batches:            newest first by batch_num (pk), cursor `before` = batch_num.
//   user batches (all): newest first by committed_at (index user_batches_committed), cursor `before`
//                       = committed_at as Unix milliseconds; rows sharing that millisecond stay on one page.
//   user batches (one party): oldest first by user_seq (pk (party, user_seq)), cursor `since` = user_seq.
import type { Queryable } from '../database.js';
import { keyedPage, uniquePage, type Page } from './page.js';

export interface BatchRow {
  batchNum: number;
  root: string;
  prevRoot: string;
  userBatchCount: number;
  firstSeq: number;
  lastSeq: number;
  txId: string | null;
  committedAt: string;
}

export interface UserBatchRow {
  party: string;
  userSeq: number;
  batchNum: number | null;
  root: string;
  prevRoot: string;
  eventCount: number;
  txId: string | null;
  committedAt: string;
}

const BATCH_COLUMNS = ['batch_num', 'root', 'prev_root', 'user_batch_count', 'first_seq', 'last_seq', 'tx_id', 'committed_at'];
const USER_BATCH_COLUMNS = ['party', 'user_seq', 'batch_num', 'root', 'prev_root', 'event_count', 'tx_id', 'committed_at'];

export function listBatches(sql: Queryable, f: { before?: number | undefined; limit: number }): Promise<Page<BatchRow>> {
  return uniquePage(f.limit, (r) => r.batchNum, (n) => sql<BatchRow[]>`
    SELECT ${sql(BATCH_COLUMNS)} FROM batches
    ${f.before !== undefined ? sql`WHERE batch_num < ${f.before}` : sql``}
    ORDER BY batch_num DESC LIMIT ${n}`);
}

export async function batchByNum(sql: Queryable, batchNum: number): Promise<BatchRow | null> {
  const rows = await sql<BatchRow[]>`SELECT ${sql(BATCH_COLUMNS)} FROM batches WHERE batch_num = ${batchNum}`;
  return rows[0] ?? null;
}

/** Unix milliseconds of an ISO time: the cursor of the global user-batch list. */
export const committedMs = (row: UserBatchRow): number => Date.parse(row.committedAt);

export function listUserBatches(sql: Queryable, f: { before?: number | undefined; limit: number }): Promise<Page<UserBatchRow>> {
  // `epoch + n ms` is exact, unlike to_timestamp(double).
  const at = (ms: number) => sql`(timestamptz 'epoch' + ${ms} * interval '1 millisecond')`;
  return keyedPage(f.limit, committedMs, {
    first: (n) => sql<UserBatchRow[]>`
      SELECT ${sql(USER_BATCH_COLUMNS)} FROM user_batches
      ${f.before !== undefined ? sql`WHERE committed_at < ${at(f.before)}` : sql``}
      ORDER BY committed_at DESC, party, user_seq LIMIT ${n}`,
    sameKey: (ms) => sql<UserBatchRow[]>`
      SELECT ${sql(USER_BATCH_COLUMNS)} FROM user_batches
      WHERE committed_at >= ${at(ms)} AND committed_at < ${at(ms + 1)}
      ORDER BY committed_at DESC, party, user_seq`,
    beyond: async (ms) => (await sql`SELECT 1 FROM user_batches WHERE committed_at < ${at(ms)} ORDER BY committed_at DESC LIMIT 1`).length > 0,
  });
}

export function listUserBatchesOf(sql: Queryable, f: { party: string; since?: number | undefined; limit: number }): Promise<Page<UserBatchRow>> {
  return uniquePage(f.limit, (r) => r.userSeq, (n) => sql<UserBatchRow[]>`
    SELECT ${sql(USER_BATCH_COLUMNS)} FROM user_batches
    WHERE party = ${f.party} ${f.since !== undefined ? sql`AND user_seq > ${f.since}` : sql``}
    ORDER BY user_seq ASC LIMIT ${n}`);
}
