// Reads every indexer table in primary-key order, for whole-table comparisons in tests.
import type postgres from 'postgres';

export const TABLE_KEYS: Record<string, string> = {
  events: 'seq',
  markets: 'symbol',
  orders: 'order_id',
  fills: 'seq, leg',
  positions: 'position_id',
  triggers: 'trigger_id',
  sessions: 'session_id',
  deposits: 'seq',
  withdrawals: 'seq',
  withdrawal_counters: 'party',
  vaults: 'operator',
  batches: 'batch_num',
  user_batches: 'party, user_seq',
};

export async function dumpTables(sql: postgres.Sql): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, key] of Object.entries(TABLE_KEYS)) {
    // Text casts make both sides compare by PostgreSQL's print form, whatever the client's types.
    out[table] = [...(await sql.unsafe(`SELECT to_jsonb(t)::text AS row FROM ${table} t ORDER BY ${key}`))].map((r) => JSON.parse(r.row as string));
  }
  return out;
}
