// The live runtime's status for /readyz (LiveStatus, live-view.ts), read off its source.
import type { EngineEventSource } from '../contracts/engine-event-source.js';
import type { LiveStatus } from './live-view.js';

/** `running`: enabled and started; a runtime that was never started reports itself disabled (nothing to be ready for). */
export function liveStatus(source: EngineEventSource, running: boolean): LiveStatus {
  const gap = source.gap;
  const lag = running ? source.lag() : undefined;
  return {
    enabled: running,
    connected: source.connected,
    maxSeq: source.position,
    caughtUp: running && source.ready,
    ...(gap ? { gap } : {}),
    // Named only for JetStream, so the single-gateway /readyz keeps its shape.
    ...(source.kind === 'sse' ? {} : { source: source.kind }),
    ...(lag ? { lag } : {}),
    // Behind past STREAM_BEHIND_MAX_S and not moving: what the replica probe judges (ADR 0126).
    ...(lag?.behind && lag.stalled ? { stalled: `${lag.events ?? 'unknown'} events behind the engine's head for ${Math.round(lag.seconds)} s, not moving` } : {}),
  };
}
