// The indexer's projection, pure: `applyEvent(state, event)` turns one engine event into row
// changes on an in-memory working set. No I/O here: the store loads the rows a batch refers to
// into a ProjectionState, applies every event of the batch, and writes the changed rows in one
// transaction. Tests drive it with recorded event lists.
import { createHash } from 'node:crypto';
import { divRound, formatDec, normDec, parseDec } from './decimal.js';
import type {
  BatchRow,
  CounterRow,
  DepositRow,
  EngineEvent,
  EventRow,
  FillRow,
  OrderRow,
  PositionRow,
  SessionRow,
  TriggerRow,
  UserBatchRow,
  VaultRow,
  WithdrawalRow,
} from './rows.js';

export interface ProjectionSettings {
  /** The single vault operator the indexer "plays the chain" for. */
  vaultOperator: string;
  /** 1-based ordinal (in commit order) of the user batch whose chain root is corrupted; 0 = none. */
  corruptUserBatch: number;
  /** batch_num whose chain manifest root is corrupted; 0 = none. */
  corruptBatch: number;
  /**
   * Tests of verifiers only: the party whose account the mirror shows altered (each of its fill
   * rows' new_balance and position rows' entry_price one unit higher; the events stay as the
   * engine sent them); absent = none.
   */
  corruptAccountOf?: string | undefined;
}

/** Rows a batch reads or changes. Keyed maps hold the final state of every touched row. */
export interface ProjectionState {
  orders: Map<string, OrderRow>;
  /** Σ size×price (scale 10^20) per order, so the average price is exact across fills. */
  orderNotional: Map<string, bigint>;
  positions: Map<string, PositionRow>;
  triggers: Map<string, TriggerRow>;
  withdrawals: Map<string, WithdrawalRow>;
  counters: Map<string, CounterRow>;
  vault: VaultRow | null;
  /** Parties known to have deposited before (for vaults.user_count). */
  depositors: Set<string>;
  /** User batches the chain has recorded but no manifest has claimed yet (batch_num null). */
  pendingUserBatches: UserBatchRow[];
  /** How many user batches the chain had recorded before this batch (for corruptUserBatch). */
  userBatchesSeen: number;
}

/** What a batch writes: append-only rows, plus the keys of changed upsert rows. */
export interface Changes {
  events: EventRow[];
  fills: FillRow[];
  deposits: DepositRow[];
  sessions: SessionRow[];
  batches: BatchRow[];
  userBatches: Map<string, UserBatchRow>;
  orders: Set<string>;
  positions: Set<string>;
  triggers: Set<string>;
  withdrawals: Set<string>;
  counters: Set<string>;
  vault: boolean;
  /** Events whose payload could not be projected (kept in `events`, logged by the caller). */
  skipped: Array<{ seq: number; kind: string; reason: string }>;
}

export function emptyState(): ProjectionState {
  return {
    orders: new Map(),
    orderNotional: new Map(),
    positions: new Map(),
    triggers: new Map(),
    withdrawals: new Map(),
    counters: new Map(),
    vault: null,
    depositors: new Set(),
    pendingUserBatches: [],
    userBatchesSeen: 0,
  };
}

export function emptyChanges(): Changes {
  return {
    events: [],
    fills: [],
    deposits: [],
    sessions: [],
    batches: [],
    userBatches: new Map(),
    orders: new Set(),
    positions: new Set(),
    triggers: new Set(),
    withdrawals: new Set(),
    counters: new Set(),
    vault: false,
    skipped: [],
  };
}

/** Keys of existing rows a list of events refers to (what the store must load first). */
export function referencedKeys(events: EngineEvent[]): { orders: Set<string>; triggers: Set<string>; withdrawals: Set<string>; depositors: Set<string> } {
  const orders = new Set<string>();
  const triggers = new Set<string>();
  const withdrawals = new Set<string>();
  const depositors = new Set<string>();
  for (const e of events) {
    const p = e.payload ?? {};
    switch (e.kind) {
      case 'engine.order_filled':
        for (const leg of Array.isArray(p.legs) ? p.legs : []) {
          const id = (leg as { orderId?: unknown }).orderId;
          if (typeof id === 'string') orders.add(id);
        }
        break;
      case 'engine.order_cancelled':
        if (typeof p.orderId === 'string') orders.add(p.orderId);
        break;
      case 'engine.trigger_cancelled':
      case 'engine.trigger_fired':
      case 'engine.attached_resolved':
        if (typeof p.triggerId === 'string') triggers.add(p.triggerId);
        break;
      case 'engine.approve_submitted':
      case 'engine.reject_submitted':
        if (typeof p.withdrawalId === 'string') withdrawals.add(p.withdrawalId);
        break;
      case 'inbound.deposit':
        if (typeof e.party === 'string') depositors.add(e.party);
        break;
    }
  }
  return { orders, triggers, withdrawals, depositors };
}

class Malformed extends Error {}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new Malformed(`${what} must be a string`);
  return v;
}

function strOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new Malformed(`${what} must be an integer`);
  return v;
}

const ONE = 10n ** 10n;

function dec(v: unknown, what: string): string {
  try {
    return formatDec(parseDec(v));
  } catch {
    throw new Malformed(`${what} must be a decimal string`);
  }
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Malformed(`${what} must be an object`);
  return v as Record<string, unknown>;
}

/** A deterministic stand-in for the chain's transaction id, so a replay writes identical rows. */
export function chainTxId(what: string): string {
  return createHash('sha256').update(`reference-chain:${what}`).digest('hex');
}

/** Flips the last hex digit: a root that is well-formed but wrong. */
export function corruptRoot(root: string): string {
  const last = root.slice(-1);
  const flipped = (parseInt(last, 16) ^ 0xf).toString(16);
  return root.slice(0, -1) + (Number.isNaN(parseInt(last, 16)) ? '0' : flipped);
}

/** Applies one event. Malformed payloads are recorded in `changes.skipped`; the event row is kept. */
export function applyEvent(state: ProjectionState, changes: Changes, e: EngineEvent, settings: ProjectionSettings): void {
  changes.events.push({ seq: e.seq, kind: e.kind, ts: e.ts, market: e.market ?? null, party: e.party ?? null, payload: e.payload ?? {} });
  try {
    project(state, changes, e, settings);
  } catch (err) {
    if (!(err instanceof Malformed)) throw err;
    changes.skipped.push({ seq: e.seq, kind: e.kind, reason: err.message });
  }
}

function project(state: ProjectionState, changes: Changes, e: EngineEvent, settings: ProjectionSettings): void {
  const p = e.payload ?? {};
  switch (e.kind) {
    case 'engine.order_placed':
      return orderPlaced(state, changes, e, obj(p.order, 'order'));
    case 'engine.order_filled':
      return orderFilled(state, changes, e, p, settings);
    case 'engine.order_cancelled': {
      const o = state.orders.get(str(p.orderId, 'orderId'));
      if (!o) return; // placed before this mirror began: nothing to update
      touchOrder(changes, o, e, 'cancelled');
      return;
    }
    case 'engine.trigger_set':
      return triggerSet(state, changes, e, obj(p.trigger, 'trigger'));
    case 'engine.attached_resolved': {
      if (p.outcome !== 'armed') return; // an abandoned leg never became a trigger
      const t = state.triggers.get(str(p.triggerId, 'triggerId'));
      if (!t) return;
      t.parent_order_id = str(p.orderId, 'orderId');
      touchTrigger(changes, t, e);
      return;
    }
    case 'engine.trigger_cancelled': {
      const t = state.triggers.get(str(p.triggerId, 'triggerId'));
      if (!t) return;
      t.status = 'cancelled';
      touchTrigger(changes, t, e);
      return;
    }
    case 'engine.trigger_fired': {
      const t = state.triggers.get(str(p.triggerId, 'triggerId'));
      if (!t) return;
      t.status = 'fired';
      t.fired_order_id = str(p.orderId, 'orderId');
      t.fired_size = normDec(p.firedSize);
      t.fired_limit = normDec(p.firedLimit);
      touchTrigger(changes, t, e);
      return;
    }
    case 'session.authorized':
      changes.sessions.push({
        session_id: str(p.sessionId, 'sessionId'),
        party: str(e.party, 'party'),
        public_key: str(p.sessionPublicKey, 'sessionPublicKey'),
        expires_at: iso(str(p.expiresAt, 'expiresAt')),
        created_seq: e.seq,
      });
      return;
    case 'inbound.deposit':
      return deposit(state, changes, e, p, settings);
    case 'inbound.withdrawal_request':
      return withdrawalRequested(state, changes, e, p);
    case 'engine.approve_submitted':
    case 'engine.reject_submitted':
      return withdrawalDecided(state, changes, e, p, settings);
    case 'engine.user_batch_committed':
      return userBatchCommitted(state, changes, e, p, settings);
    case 'outbound.batch_committed':
      return batchCommitted(state, changes, e, p, settings);
    default:
      return; // tick_start, inbound.order, order_rejected: only in `events`
  }
}

function iso(value: string): string {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new Malformed(`bad timestamp ${value}`);
  return d.toISOString();
}

function attached(v: unknown): { trigger: string | null; limit: string | null; size: string | null } {
  if (typeof v !== 'object' || v === null) return { trigger: null, limit: null, size: null };
  const a = v as Record<string, unknown>;
  return { trigger: normDec(a.triggerPrice), limit: normDec(a.limitPrice), size: normDec(a.size) };
}

function orderPlaced(state: ProjectionState, changes: Changes, e: EngineEvent, o: Record<string, unknown>): void {
  const tp = attached(o.tp);
  const sl = attached(o.sl);
  const filled = o.filledSize === undefined ? 0n : parseDec(o.filledSize);
  const row: OrderRow = {
    order_id: str(o.orderId, 'order.orderId'),
    party: str(o.party ?? e.party, 'order.party'),
    market: str(o.market ?? e.market, 'order.market'),
    side: str(o.side, 'order.side'),
    type: str(o.type, 'order.type'),
    tif: typeof o.tif === 'string' ? o.tif : 'gtc',
    price: normDec(o.price),
    size: dec(o.size, 'order.size'),
    filled_size: formatDec(filled),
    avg_price: normDec(o.avgPrice),
    status: str(o.status, 'order.status'),
    client_order_id: strOrNull(o.clientOrderId),
    created_seq: e.seq,
    updated_seq: e.seq,
    created_at: e.ts,
    updated_at: e.ts,
    reduce_only: o.reduceOnly === true,
    tp_trigger_price: tp.trigger,
    tp_limit_price: tp.limit,
    tp_size: tp.size,
    sl_trigger_price: sl.trigger,
    sl_limit_price: sl.limit,
    sl_size: sl.size,
  };
  state.orders.set(row.order_id, row);
  const avg = row.avg_price === null ? 0n : parseDec(row.avg_price);
  state.orderNotional.set(row.order_id, filled * avg);
  changes.orders.add(row.order_id);
}

function touchOrder(changes: Changes, o: OrderRow, e: EngineEvent, status: string): void {
  o.status = status;
  o.updated_seq = e.seq;
  o.updated_at = e.ts;
  changes.orders.add(o.order_id);
}

function touchTrigger(changes: Changes, t: TriggerRow, e: EngineEvent): void {
  t.updated_seq = e.seq;
  t.updated_at = e.ts;
  changes.triggers.add(t.trigger_id);
}

function orderFilled(state: ProjectionState, changes: Changes, e: EngineEvent, p: Record<string, unknown>, settings: ProjectionSettings): void {
  if (!Array.isArray(p.legs)) throw new Malformed('legs must be an array');
  const market = str(e.market, 'market');
  const matchId = str(p.matchId, 'matchId');
  p.legs.forEach((raw, i) => {
    const leg = obj(raw, `legs[${i}]`);
    const fill: FillRow = {
      seq: e.seq,
      leg: i,
      fill_id: `${e.seq}-${i}`,
      match_id: matchId,
      order_id: str(leg.orderId, 'leg.orderId'),
      party: str(leg.party, 'leg.party'),
      market,
      side: str(leg.side, 'leg.side'),
      role: str(leg.role, 'leg.role'),
      size: dec(leg.size, 'leg.size'),
      price: dec(leg.price, 'leg.price'),
      fee: dec(leg.fee, 'leg.fee'),
      realized_pnl: dec(leg.realizedPnl, 'leg.realizedPnl'),
      new_balance: dec(leg.newBalance, 'leg.newBalance'),
      position_id: str(leg.positionId, 'leg.positionId'),
      created_at: e.ts,
    };
    let entryPrice = dec(leg.entryPrice, 'leg.entryPrice');
    if (fill.party === settings.corruptAccountOf) {
      fill.new_balance = formatDec(parseDec(fill.new_balance) + ONE);
      entryPrice = formatDec(parseDec(entryPrice) + ONE);
    }
    changes.fills.push(fill);
    legToPosition(state, changes, e, fill, dec(leg.positionSize, 'leg.positionSize'), entryPrice);
    legToOrder(state, changes, e, fill);
  });
}

/** A leg carries the epoch's state after it: the position row is that state. */
function legToPosition(state: ProjectionState, changes: Changes, e: EngineEvent, fill: FillRow, size: string, entryPrice: string): void {
  let pos = state.positions.get(fill.position_id);
  if (!pos) {
    // A new epoch (or one opened in an earlier batch: the upsert keeps its opened_* columns).
    pos = {
      position_id: fill.position_id,
      party: fill.party,
      market: fill.market,
      size,
      entry_price: entryPrice,
      realized_pnl: fill.realized_pnl,
      status: 'open',
      opened_seq: e.seq,
      updated_seq: e.seq,
      closed_seq: null,
      opened_at: e.ts,
      updated_at: e.ts,
      closed_at: null,
    };
    state.positions.set(pos.position_id, pos);
  }
  pos.size = size;
  pos.entry_price = entryPrice;
  pos.realized_pnl = fill.realized_pnl;
  pos.updated_seq = e.seq;
  pos.updated_at = e.ts;
  if (parseDec(size) === 0n) {
    pos.status = 'closed';
    pos.closed_seq = e.seq;
    pos.closed_at = e.ts;
  }
  changes.positions.add(pos.position_id);
}

function legToOrder(state: ProjectionState, changes: Changes, e: EngineEvent, fill: FillRow): void {
  const o = state.orders.get(fill.order_id);
  if (!o) return;
  const size = parseDec(fill.size);
  const filled = parseDec(o.filled_size) + size;
  const notional = (state.orderNotional.get(o.order_id) ?? 0n) + size * parseDec(fill.price);
  state.orderNotional.set(o.order_id, notional);
  o.filled_size = formatDec(filled);
  o.avg_price = formatDec(divRound(notional, filled));
  touchOrder(changes, o, e, filled >= parseDec(o.size) ? 'filled' : 'partially_filled');
}

function triggerSet(state: ProjectionState, changes: Changes, e: EngineEvent, t: Record<string, unknown>): void {
  const id = str(t.triggerId, 'trigger.triggerId');
  const before = state.triggers.get(id);
  const row: TriggerRow = {
    trigger_id: id,
    party: str(t.party ?? e.party, 'trigger.party'),
    market: str(t.market ?? e.market, 'trigger.market'),
    kind: str(t.kind, 'trigger.kind'),
    status: str(t.status, 'trigger.status'),
    trigger_price: dec(t.triggerPrice, 'trigger.triggerPrice'),
    position_id: strOrNull(t.positionId),
    parent_order_id: before?.parent_order_id ?? strOrNull(t.parentOrderId),
    fired_order_id: before?.fired_order_id ?? null,
    created_seq: before?.created_seq ?? e.seq,
    updated_seq: e.seq,
    created_at: before?.created_at ?? e.ts,
    updated_at: e.ts,
    size: normDec(t.size),
    limit_price: normDec(t.limitPrice),
    fired_size: normDec(t.firedSize),
    fired_limit: normDec(t.firedLimit),
  };
  state.triggers.set(id, row);
  changes.triggers.add(id);
}

function vaultOf(state: ProjectionState, settings: ProjectionSettings, e: EngineEvent): VaultRow {
  state.vault ??= {
    operator: settings.vaultOperator,
    contract_id: `vault:${settings.vaultOperator}:${chainTxId(`vault:${settings.vaultOperator}`).slice(0, 16)}`,
    total_deposits: formatDec(0n),
    total_withdrawals: formatDec(0n),
    balance: formatDec(0n),
    user_count: 0,
    updated_seq: e.seq,
    updated_at: e.ts,
  };
  return state.vault;
}

function deposit(state: ProjectionState, changes: Changes, e: EngineEvent, p: Record<string, unknown>, settings: ProjectionSettings): void {
  const party = str(e.party, 'party');
  const amount = parseDec(dec(p.amount, 'amount'));
  const source = p.source === 'faucet' ? 'faucet' : 'chain';
  const depositId = str(p.depositId, 'depositId');
  changes.deposits.push({
    seq: e.seq,
    deposit_id: depositId,
    party,
    amount: formatDec(amount),
    source,
    // The transaction id the engine committed, as it committed it: an id made up here would be a
    // receipt that matches no credit (the trader's verification compares the two).
    tx_id: strOrNull(p.txId),
    created_at: e.ts,
  });
  // The testnet faucet mints into the vault, so faucet deposits count like chain deposits.
  const v = vaultOf(state, settings, e);
  v.total_deposits = formatDec(parseDec(v.total_deposits) + amount);
  v.balance = formatDec(parseDec(v.balance) + amount);
  if (!state.depositors.has(party)) {
    state.depositors.add(party);
    v.user_count += 1;
  }
  v.updated_seq = e.seq;
  v.updated_at = e.ts;
  changes.vault = true;
}

function withdrawalRequested(state: ProjectionState, changes: Changes, e: EngineEvent, p: Record<string, unknown>): void {
  const party = str(e.party, 'party');
  const row: WithdrawalRow = {
    seq: e.seq,
    withdrawal_id: str(p.withdrawalId, 'withdrawalId'),
    party,
    amount: dec(p.amount, 'amount'),
    nonce: int(p.nonce, 'nonce'),
    status: 'requested',
    reason: null,
    decided_seq: null,
    created_at: e.ts,
    decided_at: null,
  };
  state.withdrawals.set(row.withdrawal_id, row);
  changes.withdrawals.add(row.withdrawal_id);
  const c = state.counters.get(party);
  if (!c || c.nonce < row.nonce) {
    state.counters.set(party, { party, nonce: row.nonce, updated_seq: e.seq });
    changes.counters.add(party);
  }
}

function withdrawalDecided(state: ProjectionState, changes: Changes, e: EngineEvent, p: Record<string, unknown>, settings: ProjectionSettings): void {
  const w = state.withdrawals.get(str(p.withdrawalId, 'withdrawalId'));
  if (!w || w.status !== 'requested') return;
  w.decided_seq = e.seq;
  w.decided_at = e.ts;
  changes.withdrawals.add(w.withdrawal_id);
  if (e.kind === 'engine.reject_submitted') {
    w.status = 'rejected';
    w.reason = strOrNull(p.reason);
    return;
  }
  w.status = 'approved';
  const amount = parseDec(w.amount);
  const v = vaultOf(state, settings, e);
  v.total_withdrawals = formatDec(parseDec(v.total_withdrawals) + amount);
  v.balance = formatDec(parseDec(v.balance) - amount);
  v.updated_seq = e.seq;
  v.updated_at = e.ts;
  changes.vault = true;
}

function userBatchCommitted(state: ProjectionState, changes: Changes, e: EngineEvent, p: Record<string, unknown>, settings: ProjectionSettings): void {
  const party = str(e.party, 'party');
  const userSeq = int(p.userSeq, 'userSeq');
  state.userBatchesSeen += 1;
  const root = str(p.root, 'root');
  const row: UserBatchRow = {
    party,
    user_seq: userSeq,
    batch_num: null,
    root: state.userBatchesSeen === settings.corruptUserBatch ? corruptRoot(root) : root,
    prev_root: str(p.prevRoot, 'prevRoot'),
    event_count: int(p.eventCount, 'eventCount'),
    tx_id: chainTxId(`user-batch:${party}:${userSeq}`),
    committed_at: e.ts,
  };
  state.pendingUserBatches.push(row);
  changes.userBatches.set(`${party}\u0000${userSeq}`, row);
}

/** The manifest claims the user batches committed since the previous one. */
function batchCommitted(state: ProjectionState, changes: Changes, e: EngineEvent, p: Record<string, unknown>, settings: ProjectionSettings): void {
  const batchNum = int(p.batchNum, 'batchNum');
  const root = str(p.root, 'root');
  changes.batches.push({
    batch_num: batchNum,
    root: batchNum === settings.corruptBatch ? corruptRoot(root) : root,
    prev_root: str(p.prevRoot, 'prevRoot'),
    user_batch_count: int(p.userBatchCount, 'userBatchCount'),
    first_seq: int(p.firstSeq, 'firstSeq'),
    last_seq: int(p.lastSeq, 'lastSeq'),
    tx_id: chainTxId(`batch:${batchNum}`),
    committed_at: e.ts,
  });
  for (const u of state.pendingUserBatches) {
    u.batch_num = batchNum;
    changes.userBatches.set(`${u.party}\u0000${u.user_seq}`, u);
  }
  state.pendingUserBatches = [];
}

