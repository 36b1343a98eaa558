// A frame's wire text, made once per frame for all recipients. Passthrough events reuse the exact
// JSON the engine sent; candle frames (six per match, the bulk of the domain frames) are written
// from a template — every payload field is a 10-place decimal, an ISO time or an integer, made
// by the projection, so only the envelope strings need JSON escaping. Everything else goes
// through JSON.stringify.
import type { Frame } from '../contracts/frame.js';

const q = JSON.stringify;

export function serializeFrame(frame: Frame): string {
  if (frame.raw !== undefined) return frame.raw;
  if ((frame.kind === 'candle.update' || frame.kind === 'candle.close') && frame.market !== undefined && frame.interval !== undefined) {
    const p = frame.payload as Record<string, string | number>;
    return (
      `{"kind":"${frame.kind}","seq":${frame.seq},"ts":${q(frame.ts)},"market":${q(frame.market)},"interval":"${frame.interval}",` +
      `"payload":{"openTs":"${p.openTs}","closeTs":"${p.closeTs}","open":"${p.open}","high":"${p.high}","low":"${p.low}",` +
      `"close":"${p.close}","volume":"${p.volume}","trades":${p.trades}}}`
    );
  }
  return JSON.stringify(frame);
}
