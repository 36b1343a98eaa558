// On-chain vaults (pk operator). The table holds one row per operator: a handful of rows.
import type { Queryable } from '../database.js';

export interface VaultRow {
  operator: string;
  contractId: string;
  totalDeposits: string;
  totalWithdrawals: string;
  balance: string;
  userCount: number;
  updatedSeq: number;
  updatedAt: string;
}

const COLUMNS = ['operator', 'contract_id', 'total_deposits', 'total_withdrawals', 'balance', 'user_count', 'updated_seq', 'updated_at'];

/** Every vault, by operator (pk order). */
export function listVaults(sql: Queryable): Promise<VaultRow[]> {
  return sql<VaultRow[]>`SELECT ${sql(COLUMNS)} FROM vaults ORDER BY operator LIMIT 1000`;
}

export async function vaultByOperator(sql: Queryable, operator: string): Promise<VaultRow | null> {
  const rows = await sql<VaultRow[]>`SELECT ${sql(COLUMNS)} FROM vaults WHERE operator = ${operator}`;
  return rows[0] ?? null;
}

/** Up to two vaults: enough to tell "none", "exactly one" and "several" apart. */
export function firstTwoVaults(sql: Queryable): Promise<VaultRow[]> {
  return sql<VaultRow[]>`SELECT ${sql(COLUMNS)} FROM vaults ORDER BY operator LIMIT 2`;
}
