// Wire types of the gateway (gateway.md "REST shapes", engine.md §3–5). Decimals are strings with
// 10 decimal places, seqs integers, times ISO 8601 strings; record fields are the camelCase
// columns of the indexer tables.
export type Decimal = string;
export type Iso = string;
export type Side = 'buy' | 'sell';

export interface List<T> {
  items: T[];
  /** null on the last page; otherwise pass back as `before` (newest-first) or `since` (/v1/events). */
  nextCursor: number | null;
}

export interface Vault {
  operator: string;
  contractId: string;
  totalDeposits: Decimal;
  totalWithdrawals: Decimal;
  balance: Decimal;
  userCount: number;
  updatedSeq: number;
  updatedAt: Iso;
}

export interface Deposit {
  seq: number;
  depositId: string;
  party: string;
  amount: Decimal;
  source: 'chain' | 'faucet';
  txId: string | null;
  createdAt: Iso;
}

export type WithdrawalStatus = 'requested' | 'approved' | 'rejected';
export interface Withdrawal {
  seq: number;
  withdrawalId: string;
  party: string;
  amount: Decimal;
  nonce: number;
  status: WithdrawalStatus;
  reason: string | null;
  decidedSeq: number | null;
  createdAt: Iso;
  decidedAt: Iso | null;
}

export interface WithdrawalCounter {
  party: string;
  nonce: number;
}

export interface Batch {
  batchNum: number;
  root: string;
  prevRoot: string;
  userBatchCount: number;
  firstSeq: number;
  lastSeq: number;
  txId: string | null;
  committedAt: Iso;
}

export interface UserBatch {
  party: string;
  userSeq: number;
  batchNum: number;
  root: string;
  prevRoot: string;
  eventCount: number;
  txId: string | null;
  committedAt: Iso;
}

export type OrderStatus = 'open' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected';
export interface Order {
  orderId: string;
  party: string;
  market: string;
  side: Side;
  type: 'limit' | 'market';
  tif: 'gtc' | 'ioc' | 'alo';
  price: Decimal | null;
  size: Decimal;
  filledSize: Decimal;
  avgPrice: Decimal | null;
  status: OrderStatus;
  clientOrderId: string | null;
  createdSeq: number;
  updatedSeq: number;
  createdAt: Iso;
  updatedAt: Iso;
  reduceOnly: boolean;
  tpTriggerPrice: Decimal | null;
  tpLimitPrice: Decimal | null;
  tpSize: Decimal | null;
  slTriggerPrice: Decimal | null;
  slLimitPrice: Decimal | null;
  slSize: Decimal | null;
}

export interface Fill {
  seq: number;
  leg: number;
  fillId: string;
  matchId: string;
  orderId: string;
  party: string;
  market: string;
  side: Side;
  role: 'taker' | 'maker';
  size: Decimal;
  price: Decimal;
  fee: Decimal;
  realizedPnl: Decimal;
  newBalance: Decimal;
  positionId: string;
  createdAt: Iso;
}

export interface Position {
  positionId: string;
  party: string;
  market: string;
  size: Decimal;
  entryPrice: Decimal;
  realizedPnl: Decimal;
  status: 'open' | 'closed';
  openedSeq: number;
  updatedSeq: number;
  closedSeq: number | null;
  openedAt: Iso;
  updatedAt: Iso;
  closedAt: Iso | null;
}

export type TriggerStatus = 'armed' | 'cancelled' | 'fired';
export interface Trigger {
  triggerId: string;
  party: string;
  market: string;
  kind: 'tp' | 'sl';
  status: TriggerStatus;
  triggerPrice: Decimal;
  positionId: string | null;
  parentOrderId: string | null;
  firedOrderId: string | null;
  createdSeq: number;
  updatedSeq: number;
  createdAt: Iso;
  updatedAt: Iso;
  size: Decimal | null;
  limitPrice: Decimal | null;
  firedSize: Decimal | null;
  firedLimit: Decimal | null;
}

export interface Balance {
  party: string;
  balance: Decimal;
  asOfSeq: number | null;
}

export type VerificationStatus = 'match' | 'mismatch' | 'pending';
export interface UserBatchVerification {
  party: string;
  userSeq: number;
  engineRoot: string;
  chainRoot: string | null;
  status: VerificationStatus;
  engineSeq: number;
  committedAt: Iso;
}
export interface ManifestVerification {
  batchNum: number;
  engineRoot: string;
  chainRoot: string | null;
  status: VerificationStatus;
  engineSeq: number;
  committedAt: Iso;
}

/** An engine event as the mirror keeps it (`/v1/events`) and as passthrough frames carry it. */
export interface EngineEvent {
  seq: number;
  kind: string;
  ts: Iso;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}

export interface Health {
  status: 'ok';
}
export interface Readiness {
  status: 'ready' | 'degraded';
  reasons: string[];
  engineMaxSeq: number | null;
  [section: string]: unknown;
}

// ---- trading (engine.md §3–4) ----

/** A business rejection: HTTP 200 with `ok:false`. Returned as a value, never thrown. */
export interface Rejection {
  ok: false;
  /** invalid_size, invalid_price, below_min_notional (or `0x0C`), insufficient_margin, … */
  code: string;
  error: string;
}
export type Answer<T> = (T & { ok: true }) | Rejection;

export interface OrderRequest {
  market: string;
  side: Side;
  type: 'limit' | 'market';
  size: Decimal;
  price?: Decimal;
  tif?: 'gtc' | 'ioc' | 'alo';
  reduceOnly?: boolean;
  clientOrderId?: string;
  tp?: { triggerPrice: Decimal; limitPrice?: Decimal };
  sl?: { triggerPrice: Decimal; limitPrice?: Decimal };
}
export interface OrderAccepted {
  orderId: string;
  status: OrderStatus;
  filledSize: Decimal;
  avgPrice: Decimal | null;
}
export interface OrderCancelled {
  orderId: string;
  status: 'cancelled';
}
export interface TpslLeg {
  triggerPrice: Decimal;
  limitPrice?: Decimal;
  size?: Decimal;
}
export interface TpslRequest {
  market: string;
  /** null cancels that leg. */
  tp?: TpslLeg | null;
  sl?: TpslLeg | null;
}
export interface TpslSet {
  triggers: { triggerId: string; kind: 'tp' | 'sl'; status: TriggerStatus }[];
}
export interface SessionCreated {
  sessionId: string;
  expiresAt: number;
}
export interface Orderbook {
  market: string;
  seq: number;
  depth: number;
  bids: [Decimal, Decimal][];
  asks: [Decimal, Decimal][];
}
export interface FaucetGrant {
  party: string;
  amount: Decimal;
  newBalance: Decimal;
}
export interface UserMe {
  party: string;
  balance: Decimal;
  positions: Record<string, unknown>[];
  openOrders: Record<string, unknown>[];
  triggers: Record<string, unknown>[];
}

// ---- stream frames (spec §2, §6) ----

export interface Frame<P = Record<string, unknown>> {
  kind: string;
  ts: Iso;
  seq: number;
  market?: string;
  userParty?: string;
  party?: string;
  interval?: string;
  payload: P;
}
export interface PositionUpdate {
  positionId: string;
  size: Decimal;
  entryPrice: Decimal;
  realizedPnl: Decimal;
  asOfSeq: number;
}
