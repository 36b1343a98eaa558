// Engine events as they arrive on the admin SSE stream (docs/engine.md "Event stream") and the frames the
// gateway sends on /v1/stream (docs/stream.md).

import { ENGINE_EVENT_KINDS } from '../engine/event-kinds.js';

export interface EngineEvent {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}

export interface FillLeg {
  party: string;
  orderId: string;
  role: 'taker' | 'maker';
  side: 'buy' | 'sell';
  size: string;
  price: string;
  fee: string;
  positionId: string;
  positionSize: string;
  entryPrice: string;
  realizedPnl: string;
  newBalance: string;
}

export interface FillPayload {
  matchId: string;
  price: string;
  size: string;
  takerSide: 'buy' | 'sell';
  takerOrderId: string;
  makerOrderId: string;
  legs: FillLeg[];
}

export const CANDLE_INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];

export const DOMAIN_KINDS = [
  'position.update',
  'balance.update',
  'trade',
  'orderbook.snapshot',
  'orderbook.delta',
  'candle.update',
  'candle.close',
] as const;

/** Engine kinds forwarded unchanged (docs/stream.md): all of them. */
export const PASSTHROUGH_KINDS = ENGINE_EVENT_KINDS;

export const FRAME_KINDS: readonly string[] = [...DOMAIN_KINDS, ...PASSTHROUGH_KINDS];

/**
 * One message of the stream. `userParty` marks the gateway's user-scoped domain frames, `party`
 * a user-scoped passthrough event; both are delivered only to connections that asked for (and,
 * with auth, proved) that party.
 */
export interface Frame {
  kind: string;
  seq: number;
  ts: string;
  market?: string;
  userParty?: string;
  party?: string;
  interval?: CandleInterval;
  payload: Record<string, unknown>;
}

/** The party a frame is scoped to, if any. */
export function frameParty(frame: Frame): string | undefined {
  return frame.userParty ?? frame.party;
}

/** A pure reducer: same state and event in, same state and frames out; no I/O, no clock. */
export type Projection<S> = (state: S, event: EngineEvent) => { state: S; frames: Frame[] };
