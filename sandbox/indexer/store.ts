// The indexer's database side: loads the rows a batch of events refers to, runs the pure
// projection over them, and writes every change of the batch in one atomic message.
//
// Idempotency: `events` is the high-water mark. A batch only applies events with seq above
// max(events.seq), and events + projections commit together, so a crash or restart at any point
// either applied a whole batch or none of it. The ON CONFLICT seq guards make a replayed write
// harmless even if that invariant were bypassed.
import postgres from 'postgres';
import {
  applyEvent,
  emptyChanges,
  emptyState,
  referencedKeys,
  type Changes,
  type ProjectionSettings,
  type ProjectionState,
} from './projection.js';
import type { EngineEvent, MarketRow, OrderRow, TriggerRow, UserBatchRow, VaultRow, WithdrawalRow } from './rows.js';
import { insertSql } from './sql-text.js';

/** Every table the indexer writes (what a wipe clears). */
export const INDEXER_TABLES = [
  'events', 'orders', 'fills', 'positions', 'triggers', 'sessions', 'deposits', 'withdrawals',
  'withdrawal_counters', 'vaults', 'batches', 'user_batches', 'markets',
] as const;

/** A postgres.js client whose values come back in the rows' wire form (int8 → number, times → ISO). */
export function connect(url: string): postgres.Sql {
  return postgres(url, {
    max: 1, // one writer connection: batches are sequential anyway, and PGlite serialises everything
    prepare: false, // PGlite shares one backend between connections: no named statements to collide
    onnotice: () => {},
    connect_timeout: 5,
    connection: { application_name: 'reference-indexer' },
    types: {
      int8: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
      tstz: { to: 1184, from: [1184], serialize: (x: string) => x, parse: (x: string) => new Date(x).toISOString() },
    },
  });
}

export interface ApplyResult {
  applied: number;
  skipped: Changes['skipped'];
  lastSeq: number;
}

export class IndexerStore {
  private lastSeq = 0;
  private vault: VaultRow | null = null;
  private pending: UserBatchRow[] = [];
  private userBatchesSeen = 0;
  /** Σ size×price of non-terminal orders that have fills (exact average prices across batches). */
  private notional = new Map<string, bigint>();
  private ready = false;

  constructor(
    readonly sql: postgres.Sql,
    private readonly settings: ProjectionSettings,
  ) {}

  /** Loads the carried-over state: high-water mark, vault, unclaimed user batches, open notionals. */
  async init(): Promise<void> {
    const sql = this.sql;
    const [m] = await sql<{ max: number | null }[]>`SELECT max(seq)::int8 AS max FROM events`;
    this.lastSeq = m?.max ?? 0;
    const [v] = await sql<VaultRow[]>`SELECT * FROM vaults WHERE operator = ${this.settings.vaultOperator}`;
    this.vault = v ? { ...v } : null;
    this.pending = await sql<UserBatchRow[]>`SELECT * FROM user_batches WHERE batch_num IS NULL ORDER BY committed_at, party, user_seq`;
    this.pending = this.pending.map((r) => ({ ...r }));
    const [c] = await sql<{ n: number }[]>`SELECT count(*)::int8 AS n FROM user_batches`;
    this.userBatchesSeen = c?.n ?? 0;
    const rows = await sql<{ orderId: string; n: string }[]>`
      SELECT f.order_id AS "orderId", sum(f.size * f.price)::text AS n
      FROM orders o JOIN fills f ON f.party = o.party AND f.order_id = o.order_id
      WHERE o.status = 'partially_filled' GROUP BY f.order_id`;
    this.notional = new Map(rows.map((r) => [r.orderId, parseNotional(r.n)]));
    this.ready = true;
  }

  get highWater(): number {
    return this.lastSeq;
  }

  async upsertMarkets(markets: MarketRow[]): Promise<void> {
    const text = insertSql('markets', ['symbol', 'sz_decimals', 'min_notional', 'max_leverage', 'status'], markets, {
      key: ['symbol'],
      update: ['sz_decimals', 'min_notional', 'max_leverage', 'status'],
    });
    if (text) await this.sql.unsafe(text).simple();
  }

  /** Applies the events above the high-water mark, in one transaction. */
  async apply(events: EngineEvent[]): Promise<ApplyResult> {
    if (!this.ready) await this.init();
    const fresh = events.filter((e) => e.seq > this.lastSeq).sort((a, b) => a.seq - b.seq);
    if (fresh.length === 0) return { applied: 0, skipped: [], lastSeq: this.lastSeq };
    const state = await this.load(fresh);
    const changes = emptyChanges();
    for (const e of fresh) applyEvent(state, changes, e, this.settings);
    const text = renderChanges(state, changes);
    try {
      await this.sql.unsafe(text).simple();
    } catch (err) {
      this.ready = false; // carried-over state may now disagree with the database: reload it
      throw err;
    }
    this.lastSeq = fresh[fresh.length - 1]!.seq;
    this.vault = state.vault;
    this.pending = state.pendingUserBatches;
    this.userBatchesSeen = state.userBatchesSeen;
    for (const id of changes.orders) {
      const o = state.orders.get(id)!;
      if (o.status === 'partially_filled') this.notional.set(id, state.orderNotional.get(id) ?? 0n);
      else this.notional.delete(id);
    }
    return { applied: fresh.length, skipped: changes.skipped, lastSeq: this.lastSeq };
  }

  private async load(events: EngineEvent[]): Promise<ProjectionState> {
    const sql = this.sql;
    const keys = referencedKeys(events);
    const state = emptyState();
    state.vault = this.vault ? { ...this.vault } : null;
    state.pendingUserBatches = this.pending.map((r) => ({ ...r }));
    state.userBatchesSeen = this.userBatchesSeen;
    if (keys.orders.size > 0) {
      for (const o of await sql<OrderRow[]>`SELECT * FROM orders WHERE order_id = ANY(${[...keys.orders]}::text[])`) {
        state.orders.set(o.order_id, { ...o });
        state.orderNotional.set(o.order_id, this.notional.get(o.order_id) ?? 0n);
      }
    }
    if (keys.triggers.size > 0) {
      for (const t of await sql<TriggerRow[]>`SELECT * FROM triggers WHERE trigger_id = ANY(${[...keys.triggers]}::text[])`) {
        state.triggers.set(t.trigger_id, { ...t });
      }
    }
    if (keys.withdrawals.size > 0) {
      for (const w of await sql<WithdrawalRow[]>`SELECT * FROM withdrawals WHERE withdrawal_id = ANY(${[...keys.withdrawals]}::text[])`) {
        state.withdrawals.set(w.withdrawal_id, { ...w });
      }
    }
    if (keys.depositors.size > 0) {
      for (const r of await sql<{ party: string }[]>`SELECT DISTINCT party FROM deposits WHERE party = ANY(${[...keys.depositors]}::text[])`) {
        state.depositors.add(r.party);
      }
    }
    return state;
  }

  /** Clears every indexer table (the engine's history restarted; the old mirror is meaningless). */
  async wipe(): Promise<void> {
    await this.sql.unsafe(`TRUNCATE ${INDEXER_TABLES.join(', ')};`).simple();
    this.ready = false;
    await this.init();
  }
}

function parseNotional(text: string): bigint {
  // size × price of two numeric(38,10) has 20 decimals; keep it exact at scale 10^20.
  const [int, frac = ''] = text.split('.');
  const v = BigInt(int!.replace('-', '')) * 10n ** 20n + BigInt(frac.padEnd(20, '0').slice(0, 20) || '0');
  return text.startsWith('-') ? -v : v;
}

/** The SQL text of one batch: append-only rows, then the final state of every changed row. */
export function renderChanges(state: ProjectionState, c: Changes): string {
  const pick = <T>(keys: Set<string>, map: Map<string, T>): T[] => [...keys].map((k) => map.get(k)!).filter((r) => r !== undefined);
  const parts = [
    insertSql('events', ['seq', 'kind', 'ts', 'market', 'party', 'payload'], c.events, { key: ['seq'] }),
    insertSql('fills', ['seq', 'leg', 'fill_id', 'match_id', 'order_id', 'party', 'market', 'side', 'role', 'size', 'price', 'fee', 'realized_pnl', 'new_balance', 'position_id', 'created_at'], c.fills, { key: ['seq', 'leg'] }),
    insertSql('deposits', ['seq', 'deposit_id', 'party', 'amount', 'source', 'tx_id', 'created_at'], c.deposits, { key: ['seq'] }),
    insertSql('sessions', ['session_id', 'party', 'public_key', 'expires_at', 'created_seq'], c.sessions, { key: ['session_id'] }),
    insertSql('batches', ['batch_num', 'root', 'prev_root', 'user_batch_count', 'first_seq', 'last_seq', 'tx_id', 'committed_at'], c.batches, { key: ['batch_num'] }),
    insertSql('user_batches', ['party', 'user_seq', 'batch_num', 'root', 'prev_root', 'event_count', 'tx_id', 'committed_at'], [...c.userBatches.values()], {
      key: ['party', 'user_seq'],
      update: ['batch_num'],
      where: 'user_batches.batch_num IS NULL',
    }),
    insertSql('orders', ORDER_COLUMNS, pick(c.orders, state.orders), {
      key: ['order_id'],
      update: ORDER_COLUMNS.filter((k) => !['order_id', 'created_seq', 'created_at'].includes(k)),
      newerThan: 'updated_seq',
    }),
    insertSql('positions', ['position_id', 'party', 'market', 'size', 'entry_price', 'realized_pnl', 'status', 'opened_seq', 'updated_seq', 'closed_seq', 'opened_at', 'updated_at', 'closed_at'], pick(c.positions, state.positions), {
      key: ['position_id'],
      // opened_* stay as first written: a later batch may not know when the epoch opened.
      update: ['size', 'entry_price', 'realized_pnl', 'status', 'updated_seq', 'closed_seq', 'updated_at', 'closed_at'],
      newerThan: 'updated_seq',
    }),
    insertSql('triggers', TRIGGER_COLUMNS, pick(c.triggers, state.triggers), {
      key: ['trigger_id'],
      update: TRIGGER_COLUMNS.filter((k) => !['trigger_id', 'created_seq', 'created_at'].includes(k)),
      newerThan: 'updated_seq',
    }),
    insertSql('withdrawals', ['seq', 'withdrawal_id', 'party', 'amount', 'nonce', 'status', 'reason', 'decided_seq', 'created_at', 'decided_at'], pick(c.withdrawals, state.withdrawals), {
      key: ['seq'],
      update: ['status', 'reason', 'decided_seq', 'decided_at'],
      where: 'withdrawals.decided_seq IS NULL',
    }),
    insertSql('withdrawal_counters', ['party', 'nonce', 'updated_seq'], pick(c.counters, state.counters), {
      key: ['party'],
      update: ['nonce', 'updated_seq'],
      newerThan: 'updated_seq',
    }),
    insertSql('vaults', ['operator', 'contract_id', 'total_deposits', 'total_withdrawals', 'balance', 'user_count', 'updated_seq', 'updated_at'], c.vault && state.vault ? [state.vault] : [], {
      key: ['operator'],
      update: ['total_deposits', 'total_withdrawals', 'balance', 'user_count', 'updated_seq', 'updated_at'],
      newerThan: 'updated_seq',
    }),
  ];
  return parts.join('');
}

const ORDER_COLUMNS: Array<keyof OrderRow & string> = [
  'order_id', 'party', 'market', 'side', 'type', 'tif', 'price', 'size', 'filled_size', 'avg_price', 'status',
  'client_order_id', 'created_seq', 'updated_seq', 'created_at', 'updated_at', 'reduce_only',
  'tp_trigger_price', 'tp_limit_price', 'tp_size', 'sl_trigger_price', 'sl_limit_price', 'sl_size',
];

const TRIGGER_COLUMNS: Array<keyof TriggerRow & string> = [
  'trigger_id', 'party', 'market', 'kind', 'status', 'trigger_price', 'position_id', 'parent_order_id',
  'fired_order_id', 'created_seq', 'updated_seq', 'created_at', 'updated_at', 'size', 'limit_price',
  'fired_size', 'fired_limit',
];
