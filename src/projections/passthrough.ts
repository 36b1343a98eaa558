// Engine passthrough (docs/stream.md): every engine kind is forwarded as the engine sent it — the envelope
// `{seq, kind, ts, market?, party?, payload}` — so a client sees exactly what `/v1/events` replays.
import { withRaw, type EngineEvent } from '../contracts/engine-event.js';
import { PASSTHROUGH_KINDS, type Frame } from '../contracts/frame.js';

const FORWARDED: ReadonlySet<string> = new Set(PASSTHROUGH_KINDS);

/**
 * The frame of a forwarded event. When the event's text is known (`raw`) and the frame is exactly
 * its envelope, the frame carries that text: it is sent as those exact bytes — truly unchanged, and
 * no second JSON.stringify of the largest frames. Extra top-level fields would otherwise leak through.
 */
export function projectPassthrough(event: EngineEvent): Frame[] {
  if (!FORWARDED.has(event.kind)) return [];
  const frame: Frame = { seq: event.seq, kind: event.kind, ts: event.ts, payload: event.payload };
  if (event.market !== undefined) frame.market = event.market;
  if (event.party !== undefined) frame.party = event.party;
  if (event.raw !== undefined && Object.keys(event).length === Object.keys(frame).length) return [withRaw(frame, event.raw)];
  return [frame];
}
