// The live path's second seam: the broadcast side of the stream hub, as the live runtime and the
// order book poller see it. Frames go in here; which connection gets which frame (filters, party
// proof), the replay history and the connection lifecycle are the hub's own business.
import type { Frame } from './frame.js';

/**
 * Publishes frames to every open connection whose filters match.
 *
 * Ordering: each connection receives the frames it matches in the order they were published,
 * after its opening frames (control messages, replay, snapshot); frames published while a
 * connection is being opened are held for it and written after them, with no gap or repeat.
 *
 * Delivery is at most once per connection and never blocks: the frame's bytes are made once and
 * written to each socket. A connection whose unsent bytes pass its bound is closed with 4008
 * (the client resumes with `since`); nothing is queued beyond that bound, and publishing never
 * waits for a client.
 *
 * Threading: synchronous, on the event loop; no method may be called from inside another one of
 * this interface except `publish`/`publishAll` inside `batched` (or between `beginBatch` and `endBatch`). A publisher that is disabled (no
 * engine admin token) accepts every call and sends nothing.
 */
export interface FramePublisher {
  /**
   * Sends one frame to every matching connection, and keeps it in the replay history. Returns the
   * number of connections it reached (held for a connection being opened counts): the order book
   * views drop a view nobody receives any more.
   */
  publish(frame: Frame): number;
  /** `publish` for each frame, in order. */
  publishAll(frames: readonly Frame[]): void;
  /** Runs `fn` (which publishes): its frames leave for each connection in one write. Nesting runs inside the outer batch. */
  batched(fn: () => void): void;
  /** `batched` without a callback: frames published until `endBatch` leave for each connection in one write (inside a batch: nothing). */
  beginBatch(): void;
  endBatch(): void;
  /** The replay history is complete after `seq` (the source's start point, or the end of a skipped gap). */
  markCoveredAfter(seq: number): void;
  /** The source skipped `from..to`: the history is complete after `to`, and control connections are told `stream.gap`. */
  announceGap(from: number, to: number): void;
  /**
   * The engine's history was replaced (the new epoch is already current): the replay history
   * restarts after `head`, and every connection is told (stream.reset, or close 4011).
   */
  announceReset(previousEpoch: string | null, head: number): void;
  /** The epoch became known without a replacement: stream.subscribed again to control connections. */
  epochChanged(): void;
  /** The engine's market list was loaded or changed (rule 1 of the filters is judged again). */
  setKnownMarkets(known: ReadonlySet<string> | null): void;
}
