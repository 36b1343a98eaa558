// An engine event: one entry of the engine's history, as its admin event stream sends it
// (docs/engine.md "Event stream"), as the indexer's `events` table stores it, and as the relay
// republishes it on JetStream. Every layer that handles one imports it from here; nothing here
// imports the layers.

/**
 * Every kind of event on the engine's admin stream (the wire vocabulary shared with the client). The
 * REST `type` filter accepts exactly these, and the stream forwards each unchanged as a passthrough frame.
 */
export { ENGINE_EVENT_KINDS } from '../../packages/client/src/wire/vocabulary.js';
import type { EngineEventKindName } from '../../packages/client/src/wire/vocabulary.js';
export type EngineEventKind = EngineEventKindName;

export interface EngineEvent {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
  /**
   * The JSON text the event arrived as, when a source read it from text (SSE, JetStream); absent
   * for events read from the database. A passthrough frame is then sent as these exact bytes, and
   * the relay republishes them. Not enumerable (see `withRaw`): the event's keys, its JSON and its
   * spreads stay the engine's envelope.
   */
  readonly raw?: string;
}

/** The payload of an `engine.order_filled` event (src/projections/fill.ts narrows an event to it). */
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

/** Attaches the text an event (or the frame that forwards it unchanged) arrived as, as its `raw` field. */
export function withRaw<T extends object>(value: T, text: string): T & { readonly raw: string } {
  Object.defineProperty(value, 'raw', { value: text, enumerable: false, writable: false, configurable: false });
  return value as T & { readonly raw: string };
}

/**
 * Reads one event from its JSON text; null when the text is not an engine event envelope. The
 * text is kept as the event's `raw` field. An explicit null `market` or `party` is read as absent,
 * as the events table stores it.
 */
export function parseEngineEvent(text: string): EngineEvent | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const e = v as Record<string, unknown>;
  if (!Number.isSafeInteger(e.seq) || (e.seq as number) < 1) return null;
  if (typeof e.kind !== 'string' || typeof e.ts !== 'string') return null;
  if (typeof e.payload !== 'object' || e.payload === null || Array.isArray(e.payload)) return null;
  if (e.market === null) delete e.market;
  if (e.party === null) delete e.party;
  if (e.market !== undefined && typeof e.market !== 'string') return null;
  if (e.party !== undefined && typeof e.party !== 'string') return null;
  return withRaw(v as EngineEvent, text);
}
