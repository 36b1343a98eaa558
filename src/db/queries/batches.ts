// Batch manifests and user batches as the chain recorded them.
//   batches:            newest first by batch_num (pk), cursor `before` = batch_num.
//   user batches (all): newest batch first by batch_num (index user_batches (batch_num)), cursor `before`
//                       = batch_num; the rows of one batch stay on one page; rows without a batch_num
//                       (not yet in a manifest) are not in this list.
//   user batches (one party): oldest first by user_seq (pk (party, user_seq)), cursor `since` = user_seq.
import type { Queryable } from '../database.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import { keyedJsonPage, keyedPage, uniqueJsonPage, uniquePage, type Page, type PageQueries, type Select } from './page.js';

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

/** The columns in wire order (the Batch and UserBatch schemas'), with how each is written as JSON. */
export const BATCH_SHAPE = rowShape([
  ['batch_num', 'int'], ['root', 'text'], ['prev_root', 'text'], ['user_batch_count', 'int'], ['first_seq', 'int'],
  ['last_seq', 'int'], ['tx_id', 'text'], ['committed_at', 'time'],
]);
export const USER_BATCH_SHAPE = rowShape([
  ['party', 'text'], ['user_seq', 'int'], ['batch_num', 'int'], ['root', 'text'], ['prev_root', 'text'],
  ['event_count', 'int'], ['tx_id', 'text'], ['committed_at', 'time'],
]);
const BATCH_COLUMNS = BATCH_SHAPE.columns;
const USER_BATCH_COLUMNS = USER_BATCH_SHAPE.columns;

function listBatchesQuery(sql: Queryable, f: { before?: number | undefined; limit: number }, select: Select = sql(BATCH_COLUMNS)) {
  return (n: number) => sql<BatchRow[]>`
    SELECT ${select} FROM batches
    ${f.before !== undefined ? sql`WHERE batch_num < ${f.before}` : sql``}
    ORDER BY batch_num DESC LIMIT ${n}`;
}

export function listBatches(sql: Queryable, f: { before?: number | undefined; limit: number }): Promise<Page<BatchRow>> {
  return uniquePage(f.limit, (r) => r.batchNum, listBatchesQuery(sql, f));
}

/** The same page as `listBatches`, written as the route's JSON body. */
export function listBatchesJson(sql: Queryable, f: { before?: number | undefined; limit: number }): Promise<JsonBody> {
  return uniqueJsonPage(sql, f.limit, BATCH_SHAPE, 'batch_num', (select) => listBatchesQuery(sql, f, select));
}

export async function batchByNum(sql: Queryable, batchNum: number): Promise<BatchRow | null> {
  const rows = await sql<BatchRow[]>`SELECT ${sql(BATCH_COLUMNS)} FROM batches WHERE batch_num = ${batchNum}`;
  return rows[0] ?? null;
}

/**
 * All user batches the chain has put in a manifest, newest batch first (batch_num desc, then party,
 * user_seq), through the contract's `user_batches (batch_num)` index. The cursor is a batchNum; the
 * rows of one batch stay on one page (like the legs of a fill event), so a page may exceed `limit`.
 * Rows with a null batch_num (recorded on chain, not yet claimed by a manifest; the indexer fills the
 * number in when the manifest lands) have no place in this order and are not listed here; they are in
 * the party's own chain (`listUserBatchesOf`) and in the verifications.
 */
function listUserBatchesQueries(sql: Queryable, f: { before?: number | undefined; limit: number }, select: Select = sql(USER_BATCH_COLUMNS)): PageQueries<UserBatchRow> {
  return {
    first: (n) => sql<UserBatchRow[]>`
      SELECT ${select} FROM user_batches
      WHERE ${f.before !== undefined ? sql`batch_num < ${f.before}` : sql`batch_num IS NOT NULL`}
      ORDER BY batch_num DESC, party, user_seq LIMIT ${n}`,
    sameKey: (batchNum) => sql<UserBatchRow[]>`
      SELECT ${select} FROM user_batches WHERE batch_num = ${batchNum} ORDER BY party, user_seq`,
    beyond: async (batchNum) =>
      (await sql`SELECT 1 FROM user_batches WHERE batch_num < ${batchNum} ORDER BY batch_num DESC LIMIT 1`).length > 0,
  };
}

export function listUserBatches(sql: Queryable, f: { before?: number | undefined; limit: number }): Promise<Page<UserBatchRow>> {
  return keyedPage(f.limit, (r) => r.batchNum!, listUserBatchesQueries(sql, f));
}

/** The same page as `listUserBatches`, written as the route's JSON body. */
export function listUserBatchesJson(sql: Queryable, f: { before?: number | undefined; limit: number }): Promise<JsonBody> {
  return keyedJsonPage(sql, f.limit, USER_BATCH_SHAPE, 'batch_num', (select) => listUserBatchesQueries(sql, f, select));
}

function listUserBatchesOfQuery(sql: Queryable, f: { party: string; since?: number | undefined; limit: number }, select: Select = sql(USER_BATCH_COLUMNS)) {
  return (n: number) => sql<UserBatchRow[]>`
    SELECT ${select} FROM user_batches
    WHERE party = ${f.party} ${f.since !== undefined ? sql`AND user_seq > ${f.since}` : sql``}
    ORDER BY user_seq ASC LIMIT ${n}`;
}

export function listUserBatchesOf(sql: Queryable, f: { party: string; since?: number | undefined; limit: number }): Promise<Page<UserBatchRow>> {
  return uniquePage(f.limit, (r) => r.userSeq, listUserBatchesOfQuery(sql, f));
}

/** The same page as `listUserBatchesOf`, written as the route's JSON body. */
export function listUserBatchesOfJson(sql: Queryable, f: { party: string; since?: number | undefined; limit: number }): Promise<JsonBody> {
  return uniqueJsonPage(sql, f.limit, USER_BATCH_SHAPE, 'user_seq', (select) => listUserBatchesOfQuery(sql, f, select));
}
