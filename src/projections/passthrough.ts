// Engine passthrough (docs/stream.md): every engine kind is forwarded as the engine sent it — the envelope
// `{seq, kind, ts, market?, party?, payload}` — so a client sees exactly what `/v1/events` replays.
import { PASSTHROUGH_KINDS, type EngineEvent, type Frame } from './types.js';

const FORWARDED: ReadonlySet<string> = new Set(PASSTHROUGH_KINDS);

/**
 * The JSON text an event arrived as, when the bridge knows it. A passthrough frame is then sent
 * as those exact bytes — truly unchanged, and no second JSON.stringify of the largest frames.
 * (A side table, so events and frames stay plain data.)
 */
const rawJson = new WeakMap<object, string>();

export function rememberRawJson(event: EngineEvent, text: string): void {
  rawJson.set(event, text);
}

export function rawJsonOf(frame: Frame): string | undefined {
  return rawJson.get(frame);
}

export function projectPassthrough(event: EngineEvent): Frame[] {
  if (!FORWARDED.has(event.kind)) return [];
  const frame: Frame = { seq: event.seq, kind: event.kind, ts: event.ts, payload: event.payload };
  if (event.market !== undefined) frame.market = event.market;
  if (event.party !== undefined) frame.party = event.party;
  const raw = rawJson.get(event);
  // Only an exact envelope is reused: extra top-level fields would otherwise leak through.
  if (raw !== undefined && Object.keys(event).length === Object.keys(frame).length) rawJson.set(frame, raw);
  return [frame];
}
