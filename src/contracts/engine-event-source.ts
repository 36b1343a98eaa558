// The live path's first seam: where engine events come from, and the one place they go.
//
//   engine admin SSE ──▶ SseBridge ────────┐
//                                          ├─▶ EngineEventSink ─▶ features ─▶ FramePublisher
//   fleet JetStream ───▶ JetStreamSource ──┘    (LiveRuntime)                 (StreamHub)
//
// A source is given its sink when it is constructed and calls nothing else; the runtime
// implements the sink once, whatever the source. The guarantees below are what the projections,
// the replay history and the epoch rely on; a new source must keep every one of them (the unit
// tests of OrderedDelivery and of the SSE bridge against a scripted engine check them).
import type { EngineEvent } from './engine-event.js';

/**
 * Receives the engine's history, in order, from one EngineEventSource.
 *
 * Ordering: across `events` calls the seqs strictly increase, each seq at most once; calls are
 * never concurrent nor reentrant (one returns before the next starts; everything runs on the event
 * loop). Consecutive events have contiguous seqs, except across a `skipped` or a `replaced` call,
 * which come before the next `events`.
 *
 * Delivery is at most once and, up to reported gaps, complete: a seq the source could read
 * neither from its transport nor from the database is reported through `skipped` and never
 * delivered afterwards. A throw from `events` is logged by the source and its events count as
 * delivered (a projection bug must not stop the stream or make it repeat an event).
 *
 * Nothing is called after the source's `stop()` has resolved.
 */
export interface EngineEventSink {
  /**
   * The next events of the history, received together (a network chunk, a database page; never
   * empty): the sink writes their frames to each client in one write.
   */
  events(batch: readonly EngineEvent[]): void;
  /**
   * The source moved past an unfillable gap: events up to and including `seq` that were not
   * delivered never will be. The next event, if any, has a greater seq. `from`, when given, is
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

/** A source measured against the engine's head (a fleet replica); what /readyz and stream.lagging report. */
export interface SourceLag {
  /** The engine's newest seq as last observed; null: never observed. */
  engineHead: number | null;
  /** engineHead minus the position; null while the head is unknown. */
  events: number | null;
  seconds: number;
  /** Further behind than the configured bound. */
  behind: boolean;
  /** Behind and not moving: the source is recovering (new consumer, database). */
  stalled: boolean;
}

/**
 * A transport of the engine's history (the engine's admin SSE, or a fleet's JetStream stream).
 * It resumes by itself after any drop, fills holes from the indexer's `events` table, and reports
 * (in `gap`) and skips what neither holds. All of it goes to the sink it was constructed with,
 * under the guarantees written on EngineEventSink.
 */
export interface EngineEventSource {
  /** 'jetstream' is named in /readyz; the single gateway's SSE keeps the report's older shape. */
  readonly kind: 'sse' | 'jetstream';
  /**
   * Where a fresh start would begin so that the replay history (`historySize` events) is filled
   * from the transport itself (a replica started a second ago replays like an old one); null:
   * live from the engine's head. Asked before `start`.
   */
  replayStart(historySize: number): Promise<number | null>;
  /** The history's first event (seq 1) when the transport still holds it, else null: what the epoch is derived from. */
  firstEvent(timeoutMs: number): Promise<EngineEvent | null>;
  /** Begins delivering after `after` (null: live from the engine's head); idempotent. Connecting and resuming happen in the background. */
  start(after: number | null): void;
  /** Stops for good: resolves once no sink call is running and none will follow (and `whenReady` is settled). Idempotent. */
  stop(): Promise<void>;
  /** The seq of the last event delivered, else the resume point it started after; null: live only, nothing delivered yet. */
  readonly position: number | null;
  /** Receiving now (a replica: and caught up with the head its stream had at start). /readyz reports it. */
  readonly connected: boolean;
  /**
   * Caught up with the head the transport had at start: what it delivers from now on is live, not
   * the replay that fills the history. Turns true between two `events` calls, before the first
   * event past that head is delivered; true at once for a transport without such a head (SSE).
   */
  readonly ready: boolean;
  /** Settles once `ready` (or the source stopped). */
  whenReady(): Promise<void>;
  /** How far behind the engine's head, for a source that measures it; undefined otherwise. */
  lag(): SourceLag | undefined;
  /** The latest discontinuity (unfillable gap, replaced history) while it is recent, for /readyz; else undefined. */
  readonly gap: string | undefined;
}
