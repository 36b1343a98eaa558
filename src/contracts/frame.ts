// A frame: one message of the live stream (docs/stream.md). The projections make them from engine
// events, the order book poller makes the book snapshots, and the stream writes them to the
// connections whose filters match. Every layer that handles one imports it from here.
// The kind names are the wire vocabulary shared with the client (packages/client/src/wire/vocabulary.ts);
// what each kind carries (schema, opt-in, scope) is declared once in src/stream/frame-kinds.ts.
import { ENGINE_EVENT_KINDS } from './engine-event.js';
import { CANDLE_INTERVALS, DOMAIN_FRAME_KINDS, type CandleIntervalName } from '../../packages/client/src/wire/vocabulary.js';

export { CANDLE_INTERVALS };
export type CandleInterval = CandleIntervalName;

/** The gateway's own frame kinds (made by the projections and the order book poller). */
export const DOMAIN_KINDS = DOMAIN_FRAME_KINDS;

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
  /**
   * A passthrough frame's exact wire text: the engine event's `raw` when the frame is exactly its
   * envelope. Not enumerable (set with `withRaw`), like the event's.
   */
  readonly raw?: string;
}

/** The party a frame is scoped to, if any. */
export function frameParty(frame: Frame): string | undefined {
  return frame.userParty ?? frame.party;
}
