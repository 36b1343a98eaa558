// Deposits, withdrawals and withdrawal counters (on-chain projection). Both lists are newest first
// by their pk `seq`, which is unique, so a page is simply `limit` rows.
// Indexes: deposits pk / (party, seq desc); withdrawals pk / (party, seq desc) / (status, seq desc).
import type { Queryable } from '../database.js';
import { uniquePage, type Page } from './page.js';

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

const DEPOSIT_COLUMNS = ['seq', 'deposit_id', 'party', 'amount', 'source', 'tx_id', 'created_at'];
const WITHDRAWAL_COLUMNS = ['seq', 'withdrawal_id', 'party', 'amount', 'nonce', 'status', 'reason', 'decided_seq', 'created_at', 'decided_at'];

export interface DepositFilter {
  party?: string | undefined;
  before?: number | undefined;
  limit: number;
}

export function listDeposits(sql: Queryable, f: DepositFilter): Promise<Page<DepositRow>> {
  return uniquePage(f.limit, (r) => r.seq, (n) => sql<DepositRow[]>`
    SELECT ${sql(DEPOSIT_COLUMNS)} FROM deposits
    WHERE true
      ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
      ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC LIMIT ${n}`);
}

export interface WithdrawalFilter {
  party?: string | undefined;
  status?: string | undefined;
  before?: number | undefined;
  limit: number;
}

export function listWithdrawals(sql: Queryable, f: WithdrawalFilter): Promise<Page<WithdrawalRow>> {
  return uniquePage(f.limit, (r) => r.seq, (n) => sql<WithdrawalRow[]>`
    SELECT ${sql(WITHDRAWAL_COLUMNS)} FROM withdrawals
    WHERE true
      ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
      ${f.status !== undefined ? sql`AND status = ${f.status}` : sql``}
      ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC LIMIT ${n}`);
}

/** The party's current withdrawal nonce; 0 when it never asked for one. */
export async function withdrawalNonce(sql: Queryable, party: string): Promise<number> {
  const rows = await sql<{ nonce: number }[]>`SELECT nonce FROM withdrawal_counters WHERE party = ${party}`;
  return rows[0]?.nonce ?? 0;
}
