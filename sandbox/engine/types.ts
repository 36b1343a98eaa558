/** Shared shapes of the reference engine (wire objects use 10-decimal strings). */

export type Side = 'buy' | 'sell';
export type OrderType = 'limit' | 'market';
export type Tif = 'gtc' | 'ioc' | 'alo';
export type OrderStatus = 'open' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected';
export type TriggerKind = 'tp' | 'sl';
export type TriggerStatus = 'armed' | 'cancelled' | 'fired';
export type CancelReason = 'user' | 'ioc' | 'reduce_only' | 'margin';

export type RejectCode =
  | 'invalid_size'
  | 'invalid_price'
  | 'below_min_notional'
  | 'market_unsupported'
  | 'market_required'
  | 'insufficient_margin'
  | 'reduce_only_violation'
  | 'post_only_would_cross'
  | 'unknown_order'
  | 'order_not_open'
  | 'no_position'
  | 'invalid_signature'
  | 'session_expired';

/** A business rejection: HTTP 200 `{"ok":false,"code","error"}`. */
export class EngineReject extends Error {
  constructor(
    readonly code: RejectCode,
    message: string,
  ) {
    super(message);
  }
}

/** A transport failure (HTTP 4xx) raised from inside the core, e.g. a missing field. */
export class BadRequest extends Error {}

export interface Rejection {
  ok: false;
  code: string;
  error: string;
}

export interface WireAttached {
  triggerPrice: string;
  limitPrice: string | null;
  size: string | null;
}

export interface WireOrder {
  orderId: string;
  party: string;
  market: string;
  side: Side;
  type: OrderType;
  tif: Tif;
  price: string | null;
  size: string;
  filledSize: string;
  avgPrice: string | null;
  status: OrderStatus;
  reduceOnly: boolean;
  clientOrderId: string | null;
  tp: WireAttached | null;
  sl: WireAttached | null;
  createdAt: string;
  updatedAt: string;
  seq: number;
}

export interface WirePosition {
  positionId: string;
  party: string;
  market: string;
  size: string;
  entryPrice: string;
  realizedPnl: string;
  status: 'open' | 'closed';
  openedAt: string;
  closedAt: string | null;
}

export interface WireTrigger {
  triggerId: string;
  party: string;
  market: string;
  kind: TriggerKind;
  status: TriggerStatus;
  triggerPrice: string;
  limitPrice: string | null;
  size: string | null;
  firedSize: string | null;
  firedLimit: string | null;
  positionId: string;
}

export interface WireLeg {
  party: string;
  orderId: string;
  role: 'taker' | 'maker';
  side: Side;
  size: string;
  price: string;
  fee: string;
  positionId: string;
  positionSize: string;
  entryPrice: string;
  realizedPnl: string;
  newBalance: string;
}

export interface WireFill {
  matchId: string;
  price: string;
  size: string;
  takerSide: Side;
  takerOrderId: string;
  makerOrderId: string;
  legs: WireLeg[];
}

/** The SSE / indexer envelope. `market` and `party` are omitted when they do not apply. */
export interface EngineEvent {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}
