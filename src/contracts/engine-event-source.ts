// The live path's first seam: where engine events come from, and the one place they go.
//
//   engine admin SSE ──▶ SseBridge ────────┐
//                                          ├─▶ EngineEventSink ─▶ projections ─▶ FramePublisher
//   fleet JetStream ───▶ JetStreamSource ──┘    (LiveRuntime)                     (StreamHub)
//
// A source is given its sink when it is constructed and calls nothing else; the runtime
// implements the sink once, whatever the source. The guarantees below are what the projections,
// the replay history and the epoch rely on; a new source must keep every one of them (the unit
// tests of OrderedDelivery and of the SSE bridge against a scripted engine check them).
import type { EngineEvent } from './engine-event.js';

/**
 * Receives the engine's history, in order, from one EngineEventSource.
 *
 * Ordering: `event` is called with strictly increasing `seq`, each seq at most once, never
 * concurrently and never reentrantly (one call returns before the next starts; everything runs on
 * the event loop). Consecutive calls have contiguous seqs, except across a `skipped` or a
 * `replaced` call, which come before the next `event`.
 *
 * Delivery is at most once and, up to reported gaps, complete: a seq the source could read
 * neither from its transport nor from the database is reported through `skipped` and never
 * delivered afterwards. A throw from `event` is logged by the source and the event counts as
 * delivered (a projection bug must not stop the stream or make it repeat an event).
 *
 * Nothing is called after the source's `stop()` has resolved.
 */
export interface EngineEventSink {
  /** The next event of the history. */
  event(event: EngineEvent): void;
  /**
   * Runs `deliver`, which makes zero or more `event` calls for one group of events the source
   * received together (a network chunk, a database page). The sink may use it to write the
   * group's frames to each client in one write. Synchronous; calls may nest (the inner one runs
   * inside the outer group).
   */
  batch(deliver: () => void): void;
  /**
   * The source moved past an unfillable gap: events up to and including `seq` that were not
   * delivered never will be. The next `event`, if any, has a greater seq. `from`, when given, is
   * the first seq skipped (the gap is from..seq). Replay clients asking across the gap are told
   * `stream.gap`, and so are the control connections open when it happens.
   */
  skipped(seq: number, from?: number): void;
  /**
   * The engine's history was replaced (the engine restarted with another history): what was
   * delivered before belongs to the old one. The source resumes after `head` of the new history
   * and awaits the returned promise before it delivers anything of it (the runtime resets its
   * state and tells the clients meanwhile). A rejection is treated as resolution.
   */
  replaced(head: number): Promise<void>;
}

/**
 * A transport of the engine's history (the engine's admin SSE, or a fleet's JetStream stream).
 * It resumes by itself after any drop, fills holes from the indexer's `events` table, and reports
 * (in `gap`) and skips what neither holds. All of it goes to the sink it was constructed with,
 * under the guarantees written on EngineEventSink.
 */
export interface EngineEventSource {
  /** Begins delivering (idempotent). Returns at once; connecting and resuming happen in the background. */
  start(): void;
  /** Stops for good: resolves once no sink call is running and none will follow. Idempotent. */
  stop(): Promise<void>;
  /** The seq of the last event delivered, else the resume point it started after; null: live only, nothing delivered yet. */
  readonly position: number | null;
  /** Receiving now (a replica: and caught up with the head its stream had at start). /readyz reports it. */
  readonly connected: boolean;
  /** The latest discontinuity (unfillable gap, replaced history) while it is recent, for /readyz; else undefined. */
  readonly gap: string | undefined;
}

// The followers of the history beside the stream's projections are LiveFeatures (live-feature.ts).
