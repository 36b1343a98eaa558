// Buffered bulk writer: rows are queued per table and flushed in large chunks, through COPY FROM
// STDIN on a PostgreSQL server (fast) or multi-row INSERTs (PGlite and other servers without COPY).
import type { Sql } from 'postgres';

type Value = string | number | boolean | null | bigint | object;

export const TABLES = {
  markets: ['symbol', 'sz_decimals', 'min_notional', 'max_leverage', 'status'],
  vaults: ['operator', 'contract_id', 'total_deposits', 'total_withdrawals', 'balance', 'user_count', 'updated_seq', 'updated_at'],
  deposits: ['seq', 'deposit_id', 'party', 'amount', 'source', 'tx_id', 'created_at'],
  withdrawals: ['seq', 'withdrawal_id', 'party', 'amount', 'nonce', 'status', 'reason', 'decided_seq', 'created_at', 'decided_at'],
  withdrawal_counters: ['party', 'nonce', 'updated_seq'],
  batches: ['batch_num', 'root', 'prev_root', 'user_batch_count', 'first_seq', 'last_seq', 'tx_id', 'committed_at'],
  user_batches: ['party', 'user_seq', 'batch_num', 'root', 'prev_root', 'event_count', 'tx_id', 'committed_at'],
  orders: [
    'order_id', 'party', 'market', 'side', 'type', 'tif', 'price', 'size', 'filled_size', 'avg_price', 'status', 'client_order_id',
    'created_seq', 'updated_seq', 'created_at', 'updated_at', 'reduce_only', 'tp_trigger_price', 'tp_limit_price', 'tp_size',
    'sl_trigger_price', 'sl_limit_price', 'sl_size',
  ],
  fills: [
    'seq', 'leg', 'fill_id', 'match_id', 'order_id', 'party', 'market', 'side', 'role', 'size', 'price', 'fee', 'realized_pnl',
    'new_balance', 'position_id', 'created_at',
  ],
  positions: [
    'position_id', 'party', 'market', 'size', 'entry_price', 'realized_pnl', 'status', 'opened_seq', 'updated_seq', 'closed_seq',
    'opened_at', 'updated_at', 'closed_at',
  ],
  triggers: [
    'trigger_id', 'party', 'market', 'kind', 'status', 'trigger_price', 'position_id', 'parent_order_id', 'fired_order_id',
    'created_seq', 'updated_seq', 'created_at', 'updated_at', 'size', 'limit_price', 'fired_size', 'fired_limit',
  ],
  sessions: ['session_id', 'party', 'public_key', 'expires_at', 'created_seq'],
  events: ['seq', 'kind', 'ts', 'market', 'party', 'payload'],
} as const;

export type Table = keyof typeof TABLES;

function copyText(v: Value): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

export class BulkWriter {
  private readonly buffers = new Map<Table, Value[][]>();
  readonly counts: Record<Table, number> = Object.fromEntries(Object.keys(TABLES).map((t) => [t, 0])) as Record<Table, number>;

  constructor(
    private readonly sql: Sql,
    private readonly useCopy: boolean,
    private readonly chunkRows = 20_000,
  ) {}

  /** Queues one row (values in TABLES order); flushes that table when its buffer is full. */
  async add(table: Table, row: Value[]): Promise<void> {
    let buf = this.buffers.get(table);
    if (!buf) this.buffers.set(table, (buf = []));
    buf.push(row);
    this.counts[table]++;
    if (buf.length >= this.chunkRows) await this.flush(table);
  }

  async flush(table: Table): Promise<void> {
    const rows = this.buffers.get(table);
    if (!rows || rows.length === 0) return;
    this.buffers.set(table, []);
    const columns = TABLES[table] as readonly string[];
    if (this.useCopy) {
      const text = rows.map((r) => r.map(copyText).join('\t')).join('\n') + '\n';
      const stream = await this.sql`COPY ${this.sql(table)} (${this.sql(columns as string[])}) FROM STDIN`.writable();
      await new Promise<void>((resolve, reject) => {
        stream.on('error', reject);
        stream.on('finish', resolve);
        stream.end(text);
      });
      return;
    }
    // INSERT: bounded by the 65 535 bind parameters of one statement.
    const per = Math.max(1, Math.floor(60_000 / columns.length));
    for (let i = 0; i < rows.length; i += per) {
      const objects = rows.slice(i, i + per).map((r) => {
        const o: Record<string, any> = {}; // postgres.js row helper
        columns.forEach((c, j) => {
          const v = r[j];
          o[c] = typeof v === 'bigint' ? String(v) : v !== null && typeof v === 'object' ? this.sql.json(v as never) : v;
        });
        return o;
      });
      await this.sql`INSERT INTO ${this.sql(table)} ${this.sql(objects, columns as string[])}`;
    }
  }

  async flushAll(): Promise<void> {
    for (const table of Object.keys(TABLES) as Table[]) await this.flush(table);
  }
}
