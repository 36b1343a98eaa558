// Row shapes of the indexer tables (schema/migrations), keyed by their column names so a row can
// be written as-is. Decimals are 10-decimal strings (PostgreSQL's own print form), seqs numbers,
// times ISO strings: a row built in memory compares equal to the same row read back.

import type { EngineEvent } from '../engine/types.js';

/** The engine's event envelope, as the reference engine declares it. */
export type { EngineEvent };

export interface EventRow {
  seq: number;
  kind: string;
  ts: string;
  market: string | null;
  party: string | null;
  payload: Record<string, unknown>;
}

export interface MarketRow {
  symbol: string;
  sz_decimals: number;
  min_notional: string;
  max_leverage: number;
  status: string;
}

export interface OrderRow {
  order_id: string;
  party: string;
  market: string;
  side: string;
  type: string;
  tif: string;
  price: string | null;
  size: string;
  filled_size: string;
  avg_price: string | null;
  status: string;
  client_order_id: string | null;
  created_seq: number;
  updated_seq: number;
  created_at: string;
  updated_at: string;
  reduce_only: boolean;
  tp_trigger_price: string | null;
  tp_limit_price: string | null;
  tp_size: string | null;
  sl_trigger_price: string | null;
  sl_limit_price: string | null;
  sl_size: string | null;
}

export interface FillRow {
  seq: number;
  leg: number;
  fill_id: string;
  match_id: string;
  order_id: string;
  party: string;
  market: string;
  side: string;
  role: string;
  size: string;
  price: string;
  fee: string;
  realized_pnl: string;
  new_balance: string;
  position_id: string;
  created_at: string;
}

export interface PositionRow {
  position_id: string;
  party: string;
  market: string;
  size: string;
  entry_price: string;
  realized_pnl: string;
  status: 'open' | 'closed';
  opened_seq: number;
  updated_seq: number;
  closed_seq: number | null;
  opened_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface TriggerRow {
  trigger_id: string;
  party: string;
  market: string;
  kind: string;
  status: string;
  trigger_price: string;
  position_id: string | null;
  parent_order_id: string | null;
  fired_order_id: string | null;
  created_seq: number;
  updated_seq: number;
  created_at: string;
  updated_at: string;
  size: string | null;
  limit_price: string | null;
  fired_size: string | null;
  fired_limit: string | null;
}

export interface SessionRow {
  session_id: string;
  party: string;
  public_key: string;
  expires_at: string;
  created_seq: number;
}

export interface DepositRow {
  seq: number;
  deposit_id: string;
  party: string;
  amount: string;
  source: string;
  tx_id: string | null;
  created_at: string;
}

export interface WithdrawalRow {
  seq: number;
  withdrawal_id: string;
  party: string;
  amount: string;
  nonce: number;
  status: 'requested' | 'approved' | 'rejected';
  reason: string | null;
  decided_seq: number | null;
  created_at: string;
  decided_at: string | null;
}

export interface CounterRow {
  party: string;
  nonce: number;
  updated_seq: number;
}

export interface VaultRow {
  operator: string;
  contract_id: string;
  total_deposits: string;
  total_withdrawals: string;
  balance: string;
  user_count: number;
  updated_seq: number;
  updated_at: string;
}

export interface BatchRow {
  batch_num: number;
  root: string;
  prev_root: string;
  user_batch_count: number;
  first_seq: number;
  last_seq: number;
  tx_id: string | null;
  committed_at: string;
}

export interface UserBatchRow {
  party: string;
  user_seq: number;
  batch_num: number | null;
  root: string;
  prev_root: string;
  event_count: number;
  tx_id: string | null;
  committed_at: string;
}
