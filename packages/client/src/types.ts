// Wire types of the gateway (docs/rest.md "Shapes", docs/engine.md). Decimals are strings with
// 10 decimal places, seqs integers, times ISO 8601 strings; record fields are the camelCase
// columns of the indexer tables.
import type { EngineOrder, EnginePosition, EngineTrigger, MarketOf, TypedEngineEvent } from './engine-events.js';
import type {
  AccountUpdateFrame,
  BalanceUpdateFrame,
  CandleCloseFrame,
  CandleUpdateFrame,
  Candle,
  GapMessage,
  HeartbeatMessage,
  Market,
  Order,
  OrderbookSnapshotFrame,
  OrderbookDeltaFrame,
  OrderUpdateFrame,
  OpenInterestUpdateFrame,
  FillFrame,
  PositionUpdateFrame,
  ResetMessage,
  SubscribedMessage,
  Trigger,
  TradeFrame,
  UserBatchVerification,
  Withdrawal,
} from './generated/wire.js';

export type Decimal = string;
export type Iso = string;
export type Side = 'buy' | 'sell';

export interface List<T> {
  items: T[];
  /** null on the last page; otherwise pass back as `before` (newest-first) or `since` (/v1/events). */
  nextCursor: number | null;
}

// REST records: generated from the gateway's own schemas (src/http/reads/shapes.ts), see
// generated/wire.ts. Re-exported under the names the client has always used.
export type {
  Vault,
  Deposit,
  Withdrawal,
  WithdrawalCounter,
  Batch,
  UserBatch,
  Order,
  Fill,
  Position,
  Trigger,
  Trade,
  UserBatchVerification,
  ManifestVerification,
  UserBatchProof,
  PnlHistory,
  PnlPoint,
  TradeHistoryItem,
  AccountAsOf,
} from './generated/wire.js';
export type { BalanceBody as Balance, EventEnvelope as EngineEvent } from './generated/wire.js';
export type WithdrawalStatus = Withdrawal['status'];
export type OrderStatus = Order['status'];
export type TriggerStatus = Trigger['status'];
export type VerificationStatus = UserBatchVerification['status'];

export interface Health {
  status: 'ok';
}
export interface Readiness {
  status: 'ready' | 'degraded';
  reasons: string[];
  engineMaxSeq: number | null;
  [section: string]: unknown;
}

// ---- trading (docs/engine.md) ----

/** A business rejection: HTTP 200 with `ok:false`. Returned as a value, never thrown. */
export interface Rejection {
  ok: false;
  /** invalid_size, invalid_price, below_min_notional (or `0x0C`), insufficient_margin, … */
  code: string;
  error: string;
}
export type Answer<T> = (T & { ok: true }) | Rejection;

interface OrderFields<M extends string> {
  /** A known market literal, or any `string` value (see MarketOf). */
  market: MarketOf<M>;
  side: Side;
  /** A decimal string ("0.001"); a number is refused before sending (it would lose precision). */
  size: Decimal;
  reduceOnly?: boolean;
  clientOrderId?: string;
  tp?: { triggerPrice: Decimal; limitPrice?: Decimal };
  sl?: { triggerPrice: Decimal; limitPrice?: Decimal };
}
/** A limit order: the price is required. */
export interface LimitOrderRequest<M extends string = string> extends OrderFields<M> {
  type: 'limit';
  price: Decimal;
  /** gtc (default), ioc, or alo (post-only). */
  tif?: 'gtc' | 'ioc' | 'alo';
}
/** A market order: `price` is an optional worst price; it never rests (it is always ioc). */
export interface MarketOrderRequest<M extends string = string> extends OrderFields<M> {
  type: 'market';
  price?: Decimal;
  /** No time in force: a market order is always ioc, so a `tif` here does not compile. */
  tif?: never;
}
/** Typed by order type: a limit order without a price does not compile. */
export type OrderRequest<M extends string = string> = LimitOrderRequest<M> | MarketOrderRequest<M>;
/** What a placed order can be right after placement (a refusal is a Rejection, never a status). */
export type PlacedOrderStatus = 'open' | 'partially_filled' | 'filled' | 'cancelled';
export interface OrderAccepted {
  orderId: string;
  status: PlacedOrderStatus;
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
/** GET /v1/users/:party/faucet: the cooldown left. */
export interface FaucetStatus {
  party: string;
  amount: Decimal;
  cooldownS: number;
  /** 0 when a top-up is allowed now. */
  retryAfterS: number;
  /** When the cooldown ends (ISO 8601); null when a top-up is allowed now. */
  nextAt: string | null;
}
export interface UserMe {
  party: string;
  balance: Decimal;
  positions: EnginePosition[];
  openOrders: EngineOrder[];
  triggers: EngineTrigger[];
}

// ---- stream frames (docs/stream.md): generated from src/stream/schemas.ts ----

/** Envelope field of the state sent on subscribe (before live frames). */
export interface SnapshotMark {
  /** true on the frames that carry the state at subscribe time (not an event that just happened). */
  snapshot?: true;
}
/** Every message with an engine seq: domain frames and forwarded engine events. */
export type Frame =
  | ((PositionUpdateFrame | BalanceUpdateFrame | AccountUpdateFrame | TradeFrame | OrderbookSnapshotFrame | OrderbookDeltaFrame | OrderUpdateFrame | FillFrame | OpenInterestUpdateFrame | CandleUpdateFrame | CandleCloseFrame) & SnapshotMark)
  | TypedEngineEvent;
/** Control messages, sent to connections that opt in (`control=true` or `since=`). */
export type ControlMessage = SubscribedMessage | GapMessage | ResetMessage | HeartbeatMessage;
export type PositionUpdate = PositionUpdateFrame['payload'];
export type CandlePayload = CandleUpdateFrame['payload'];
export type {
  PositionUpdateFrame,
  BalanceUpdateFrame,
  TradeFrame,
  OrderUpdateFrame,
  FillFrame,
  OpenInterestUpdateFrame,
  OrderbookSnapshotFrame,
  CandleUpdateFrame,
  CandleCloseFrame,
  PassthroughFrame,
  SubscribedMessage,
  GapMessage,
  ResetMessage,
  HeartbeatMessage,
} from './generated/wire.js';
export type { Market, Candle, ServerTime } from './generated/wire.js';
export type MarketStats = Market['stats24h'];
export type CandleInterval = Candle['interval'];
