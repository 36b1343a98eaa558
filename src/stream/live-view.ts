// What the HTTP edge reads from the live runtime (implemented by LiveRuntime, src/live.ts): the
// hub to hand upgrades to, the stream metrics, the engine's markets for rule 1, and the status
// /readyz reports. The edge depends on this, never on the composition root.
import type { StreamFanout } from './fanout.js';
import type { StreamMetrics } from './metrics.js';
import type { CommitmentStatus } from '../contracts/commitment-status.js';
import type { AccountBook } from './account-book.js';
import type { BookStream } from './book-stream.js';
import type { BookViewSpec } from './book-views.js';
import type { ClientOrderState } from './client-orders.js';

/** What the live stream runtime reports to /readyz and /metrics. */
export interface LiveStatus {
  enabled: boolean;
  connected: boolean;
  maxSeq: number | null;
  gap?: string;
  /** Where engine events come from; named only with JetStream (NATS_URL). */
  source?: 'sse' | 'jetstream';
  /**
   * The start-up catch-up is done: with JetStream, the stream's head as it was at start has been
   * projected (until then the replay history is incomplete); with SSE, as soon as the runtime started.
   */
  caughtUp?: boolean;
  /**
   * Set while the replica is behind the engine's head and not moving (the stall check against the
   * engine's head): why, in words. The replica probe (/readyz/replica) is 503 while it is set.
   */
  stalled?: string;
  /**
   * With JetStream: this replica measured against the engine's head (docs/fleet.md "Behind the
   * engine"), for /readyz, the metrics and whatever judges the replica.
   */
  lag?: StreamLag;
}

export interface StreamLag {
  /** The engine's newest seq as last observed (its /healthz maxSeq, else the stream's last message); null: never observed. */
  engineHead: number | null;
  /** engineHead minus the replica's position; null while the head is unknown. */
  events: number | null;
  /** How long ago the replica last held everything the engine had; grows every second while it does not. */
  seconds: number;
  /** More than STREAM_BEHIND_MAX_S behind: degraded, clients told (stream.lagging). */
  behind: boolean;
  /** Behind and not moving: the replica is recovering (new consumer, database fill). */
  stalled: boolean;
}

export interface LiveView {
  readonly hub: StreamFanout;
  readonly streamMetrics: StreamMetrics;
  /** The engine's active markets (rule 1 of the stream filters), null until known. */
  knownMarkets(): ReadonlySet<string> | null;
  /** The accounts (docs/account.md); absent in runtimes without them. */
  readonly accounts?: AccountBook;
  /** A runtime that was never started reports itself disabled. */
  status(): LiveStatus;
  /**
   * Why an order the engine answered `cancelled` ended (user, ioc, margin, reduce_only), from its
   * engine.order_cancelled event, waiting up to `waitMs` for it; null when it did not come.
   */
  orderOutcome(orderId: string, waitMs: number): Promise<string | null>;
  /** The commitment check (docs/verification.md); null when the live runtime is disabled. */
  commitmentStatus(): CommitmentStatus | null;
  /** The order a party placed with a client order id, as the engine events last told it; null when not known here. */
  clientOrder(party: string, clientOrderId: string): ClientOrderState | null;
  /** Throws the refusal of a book view past the bound on distinct `tick:` groupings (tick-groupings.ts). */
  admitBookView?(spec: BookViewSpec | null): void;
}

/**
 * What the edge (and tests) may ask of the live features, answered by the composition that lists
 * them (src/live-features.ts): the runtime forwards these and knows no feature behind them.
 */
export interface LiveFeatureQueries {
  readonly accounts?: AccountBook;
  /** The order books kept from the events (tests compare them with the engine's). */
  readonly books?: BookStream;
  orderOutcome(orderId: string, waitMs: number): Promise<string | null>;
  commitmentStatus(): CommitmentStatus | null;
  /** The order a party placed with a client order id, as the user channels last told it (client-orders.ts). */
  clientOrder?(party: string, clientOrderId: string): ClientOrderState | null;
}
