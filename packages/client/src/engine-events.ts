// Typed payloads of the engine events the stream forwards unchanged and /v1/events returns
// (docs/engine.md "Event stream"), and the literal unions of the stream's filters: frame kinds,
// candle intervals and the markets known at compile time.
type Decimal = string;
type Side = 'buy' | 'sell';

/** One change of one party's position in a fill, and the state after it. */
export interface FillLeg {
  party: string;
  orderId: string;
  role: 'taker' | 'maker';
  side: Side;
  size: Decimal;
  price: Decimal;
  fee: Decimal;
  positionId: string;
  positionSize: Decimal;
  entryPrice: Decimal;
  realizedPnl: Decimal;
  newBalance: Decimal;
}

/** An order as the engine writes it (events, /v1/user/me); the REST record is `Order`. */
export interface EngineOrder {
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
  status: 'open' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected';
  reduceOnly: boolean;
  clientOrderId: string | null;
  tp: { triggerPrice: Decimal; limitPrice: Decimal | null; size: Decimal | null } | null;
  sl: { triggerPrice: Decimal; limitPrice: Decimal | null; size: Decimal | null } | null;
  createdAt: string;
  updatedAt: string;
  seq: number;
}

/** A position epoch as the engine writes it. */
export interface EnginePosition {
  positionId: string;
  party: string;
  market: string;
  size: Decimal;
  entryPrice: Decimal;
  realizedPnl: Decimal;
  status: 'open' | 'closed';
  openedAt: string;
  closedAt: string | null;
}

/** A take-profit / stop-loss trigger as the engine writes it. */
export interface EngineTrigger {
  triggerId: string;
  party: string;
  market: string;
  kind: 'tp' | 'sl';
  status: 'armed' | 'cancelled' | 'fired';
  triggerPrice: Decimal;
  limitPrice: Decimal | null;
  size: Decimal | null;
  firedSize: Decimal | null;
  firedLimit: Decimal | null;
  positionId: string | null;
}

export interface AttachedLeg {
  triggerPrice: Decimal;
  limitPrice?: Decimal | null;
  size?: Decimal | null;
}

/** The payload of each engine event kind. */
export interface EnginePayloads {
  'engine.tick_start': { tick: number };
  'inbound.deposit': { depositId: string; amount: Decimal; source: 'chain' | 'faucet'; txId: string | null; newBalance: Decimal };
  'inbound.withdrawal_request': { withdrawalId: string; amount: Decimal; nonce: number };
  'engine.approve_submitted': { withdrawalId: string; newBalance: Decimal };
  'engine.reject_submitted': { withdrawalId: string; reason: string };
  'session.authorized': { sessionId: string; sessionPublicKey: string; expiresAt: string };
  'inbound.order': { clientOrderId: string | null; request: Record<string, unknown> };
  'engine.order_placed': { order: EngineOrder };
  'engine.order_filled': { matchId: string; price: Decimal; size: Decimal; takerSide: Side; takerOrderId: string; makerOrderId: string; legs: FillLeg[] };
  'engine.order_cancelled': { orderId: string; reason: 'user' | 'ioc' | 'reduce_only' | 'margin' };
  'engine.order_rejected': { clientOrderId: string | null; code: string; error: string };
  'engine.trigger_set': { trigger: EngineTrigger };
  'engine.trigger_cancelled': { triggerId: string };
  'engine.trigger_fired': { triggerId: string; orderId: string; firedSize: Decimal; firedLimit: Decimal | null };
  'engine.attached_resolved': { orderId: string; triggerId: string; outcome: 'armed' | 'abandoned' };
  'engine.user_batch_committed': { userSeq: number; root: string; prevRoot: string; eventCount: number };
  'outbound.batch_committed': { batchNum: number; root: string; prevRoot: string; userBatchCount: number; firstSeq: number; lastSeq: number };
}

export type EngineEventKind = keyof EnginePayloads;

/** One engine event of kind K: `{seq, kind, ts, market?, party?, payload}`. */
export interface EngineEventOf<K extends EngineEventKind> {
  seq: number;
  kind: K;
  ts: string;
  market?: string;
  party?: string;
  payload: EnginePayloads[K];
  /** true on frames sent as the state on subscribe. */
  snapshot?: true;
}

/** Any engine event, narrowed by `kind` (`if (e.kind === 'engine.order_filled') e.payload.legs…`). */
export type TypedEngineEvent = { [K in EngineEventKind]: EngineEventOf<K> }[EngineEventKind];

// The kind names are the wire vocabulary the gateway imports too (wire/vocabulary.ts): one list each.
export { ENGINE_EVENT_KINDS, DOMAIN_FRAME_KINDS, CANDLE_INTERVALS } from './wire/vocabulary.js';
import type { CandleIntervalName, DomainFrameKind, EngineEventKindName } from './wire/vocabulary.js';

/** Every kind the `kinds` filter accepts. */
export type FrameKind = DomainFrameKind | EngineEventKind;

export type Interval = CandleIntervalName;

/** The typed payloads above cover exactly the engine's kinds (a kind added to one side only fails to compile). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const ENGINE_PAYLOADS_COVER_EVERY_KIND: Same<EngineEventKind, EngineEventKindName> = true;

/** The markets of the reference engine, known at compile time. */
export const KNOWN_MARKETS = ['BTC-PERP', 'ETH-PERP', 'SOL-PERP'] as const;
export type KnownMarket = (typeof KNOWN_MARKETS)[number];

/**
 * A market argument: a literal must be a known market (`'btc-perp'` does not compile); a value of
 * type `string` (read at run time, e.g. from GET /v1/markets) passes — the escape hatch, also
 * reachable as `market('NEW-PERP')` for a literal unknown at compile time.
 */
export type MarketOf<M extends string> = string extends M ? M : M extends KnownMarket ? M : UnknownMarket<M>;

type Join<T extends readonly string[]> = T extends readonly [infer H extends string, ...infer R extends string[]] ? (R extends [] ? H : `${H}, ${Join<R>}`) : '';

/**
 * What a literal that names no known market must be: the compiler's error then reads
 * `Type '"btc-perp"' is not assignable to type '"unknown market btc-perp: …"'` instead of `never`.
 */
export type UnknownMarket<M extends string> = `unknown market ${M}: use ${Join<typeof KNOWN_MARKETS>}, or market('${M}') for a symbol not known at compile time`;

/** The escape hatch: a market symbol not known at compile time. */
export function market(symbol: string): string {
  return symbol;
}
