// The live path's feature seam: everything that follows the engine's history (the stream's own
// projections first, then books, user channels, recent trades, order outcomes, accounts,
// commitments, session keys, the desk's switches, …) is a LiveFeature, listed once where the runtime is composed
// (src/live-features.ts). The runtime (src/live.ts) wires the list to the sink and the hub and
// knows no feature by name: the path of an event is the same list, in the same order, for all.
//
//   source ─► EngineEventSink ─► for each feature, in list order: event() → frames ─► hub
//                                 every published frame ─► each feature's frame()
//             end of a group   ─► for each feature, in list order: endOfBatch() (may publish) ─► hub
//
// Generic in the subscription type so that this layer-0 contract does not import the hub's
// (stream/subscription.ts); the runtime instantiates it with the hub's Subscription.
import type { EngineEvent, FillPayload } from './engine-event.js';
import type { Frame } from './frame.js';

/** The engine's book of one market as a poll read it, at the engine's seq of the read. */
export interface PolledBook {
  readonly market: string;
  readonly seq: number;
  readonly bids: ReadonlyArray<readonly [string, string]>;
  readonly asks: ReadonlyArray<readonly [string, string]>;
}

/** What a feature adds to a new connection's (or a subscribe's) snapshot. */
export interface FeatureSnapshot {
  /** Frames written at once, in the feature's list order after the earlier features' frames. */
  readonly frames: readonly Frame[];
  /** Frames known only later (a database or engine read); written when they settle, before live frames held meanwhile. */
  readonly later?: Promise<readonly Frame[]> | null;
}

/**
 * One follower of the engine's history on the live path.
 *
 * Guarantees the runtime gives every feature (they are the sink's, src/contracts/engine-event-source.ts):
 * - `event` is called for each delivered event, strictly increasing seq, at most once, never
 *   reentrantly; every feature sees an event before the next event reaches any feature, and in
 *   list order (a feature may rely on an earlier one having seen the same event).
 * - The frames a feature returns are published on the hub in that order, right after its call,
 *   before the next feature is called; each published frame (from any feature, or the order book
 *   poller) is then passed to every feature's `frame`, in publish order.
 * - A throw from any hook is logged with the feature's name and does not stop the event reaching
 *   the other features or the clients (a feature bug must not stop the stream).
 * - `replaced` is called for every feature, in list order, before anything of a new history is
 *   delivered; after it nothing of the old history may survive in the feature.
 * - `endOfBatch` is called exactly once after the last event of each batch the source delivered
 *   together (one sink `events` call: a network chunk, a database page). Every event is followed
 *   by exactly one `endOfBatch` before any event of the next batch reaches any feature; by then
 *   every feature has seen every event of the batch. Features are called in list order; the
 *   frames they publish from it go to the clients in the same write as the group's other frames.
 *   It is where a feature that coalesces per group (one book delta, one open interest frame per
 *   market) publishes, so none keeps its own "am I inside a batch" state.
 * - `stop` is awaited on shutdown (all features concurrently); nothing is called after it.
 */
export interface LiveFeature<Sub = unknown> {
  /** A short name for logs and metrics ("books", "user-channels", …). */
  readonly name: string;
  /**
   * Once, when the runtime starts, before the source delivers anything: the stream starts after
   * `startAfter` (the mirror's newest seq), or live from the engine's head when null. Awaited
   * (all features concurrently); a rejection is logged and the start goes on.
   */
  start?(startAfter: number | null): void | Promise<void>;
  /** The next event of the history (`fill`: its fill payload, read once for every feature); returns the frames to publish for it, if any. */
  event?(event: EngineEvent, fill: FillPayload | null): readonly Frame[] | void;
  /** Every frame published on the live path, after the hub was given it. */
  frame?(frame: Frame): void;
  /** The group of events delivered together has ended (guarantees above): publish what was coalesced over it. */
  endOfBatch?(): void;
  /** The engine's history was replaced; the next event is after `head` of the new one. */
  replaced?(head: number): void;
  /** What this feature adds to a connection's snapshot for `sub` (null or undefined: nothing). */
  snapshot?(sub: Sub): FeatureSnapshot | null | undefined;
  /** A connection's subscription changed (opened: before null; closed: after null). */
  subscriptionChanged?(before: Sub | null, after: Sub | null): void;
  /** The engine's market list loaded or changed. */
  markets?(known: ReadonlySet<string>): void;
  /** A poll of the engine's own book of one market (every poll, changed or not), read at `depth`. */
  polled?(book: PolledBook, depth: number): void;
  /** Shutdown: release timers, workers and connections. */
  stop?(): void | Promise<void>;
}
