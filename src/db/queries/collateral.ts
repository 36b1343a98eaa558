// Deposits, withdrawals and withdrawal counters (on-chain projection). Both lists are newest first
// by their pk `seq`, which is unique, so a page is simply `limit` rows.
// Indexes: deposits pk / (party, seq desc); withdrawals pk / (party, seq desc) / (status, seq desc).
import type { Queryable } from '../database.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import type { RowCache } from '../json/row-cache.js';
import { rowVersions, uniqueJsonPage, uniquePage, type Page, type Select } from './page.js';

export interface DepositRow {
  seq: number;
  depositId: string;
  party: string;
  amount: string;
  source: 'chain' | 'faucet';
  txId: string | null;
  createdAt: string;
}

export interface WithdrawalRow {
  seq: number;
  withdrawalId: string;
  party: string;
  amount: string;
  nonce: number;
  status: 'requested' | 'approved' | 'rejected';
  reason: string | null;
  decidedSeq: number | null;
  createdAt: string;
  decidedAt: string | null;
}

/** The columns in wire order (the Deposit and Withdrawal schemas'), with how each is written as JSON. */
export const DEPOSIT_SHAPE = rowShape([
  ['seq', 'int'], ['deposit_id', 'text'], ['party', 'text'], ['amount', 'decimal'], ['source', 'text'], ['tx_id', 'text'],
  ['created_at', 'time'],
]);
export const WITHDRAWAL_SHAPE = rowShape([
  ['seq', 'int'], ['withdrawal_id', 'text'], ['party', 'text'], ['amount', 'decimal'], ['nonce', 'int'], ['status', 'text'],
  ['reason', 'text'], ['decided_seq', 'int'], ['created_at', 'time'], ['decided_at', 'time'],
]);
const DEPOSIT_COLUMNS = DEPOSIT_SHAPE.columns;
const WITHDRAWAL_COLUMNS = WITHDRAWAL_SHAPE.columns;
/** A deposit never changes once written: its JSON is kept by version (page.ts rowVersions). */
const DEPOSIT_VERSIONS = rowVersions('deposits', ['seq'], DEPOSIT_SHAPE);

export interface DepositFilter {
  party?: string | undefined;
  before?: number | undefined;
  limit: number;
}

function listDepositsQuery(sql: Queryable, f: DepositFilter, select: Select = sql(DEPOSIT_COLUMNS)) {
  return (n: number) => sql<DepositRow[]>`
    SELECT ${select} FROM deposits
    WHERE true
      ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
      ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC LIMIT ${n}`;
}

export function listDeposits(sql: Queryable, f: DepositFilter): Promise<Page<DepositRow>> {
  return uniquePage(f.limit, (r) => r.seq, listDepositsQuery(sql, f));
}

/** The same page as `listDeposits`, written as the route's JSON body (rows kept in `cache` reused). */
export function listDepositsJson(sql: Queryable, f: DepositFilter, cache?: RowCache): Promise<JsonBody> {
  return uniqueJsonPage(sql, f.limit, DEPOSIT_SHAPE, 'seq', (select) => listDepositsQuery(sql, f, select), cache && { cache, versions: DEPOSIT_VERSIONS });
}

export interface WithdrawalFilter {
  party?: string | undefined;
  status?: string | undefined;
  before?: number | undefined;
  limit: number;
}

function listWithdrawalsQuery(sql: Queryable, f: WithdrawalFilter, select: Select = sql(WITHDRAWAL_COLUMNS)) {
  return (n: number) => sql<WithdrawalRow[]>`
    SELECT ${select} FROM withdrawals
    WHERE true
      ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
      ${f.status !== undefined ? sql`AND status = ${f.status}` : sql``}
      ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC LIMIT ${n}`;
}

export function listWithdrawals(sql: Queryable, f: WithdrawalFilter): Promise<Page<WithdrawalRow>> {
  return uniquePage(f.limit, (r) => r.seq, listWithdrawalsQuery(sql, f));
}

/** The same page as `listWithdrawals`, written as the route's JSON body. */
export function listWithdrawalsJson(sql: Queryable, f: WithdrawalFilter): Promise<JsonBody> {
  return uniqueJsonPage(sql, f.limit, WITHDRAWAL_SHAPE, 'seq', (select) => listWithdrawalsQuery(sql, f, select));
}

/** The party's current withdrawal nonce; 0 when it never asked for one. */
export async function withdrawalNonce(sql: Queryable, party: string): Promise<number> {
  const rows = await sql<{ nonce: number }[]>`SELECT nonce FROM withdrawal_counters WHERE party = ${party}`;
  return rows[0]?.nonce ?? 0;
}
