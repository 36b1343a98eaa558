// The per-connection queues of the socket's calls (docs/stream.md "Talking to the socket"): each
// call waits in the lane it declares, and a lane holds at most `max` calls of one connection at
// once; one more is refused `rate_limited` until one is answered. A serial lane runs its calls one
// after the other (subscription changes: each is applied to the filters the previous one left);
// the others run theirs concurrently. Lanes are apart so that one kind of call never waits for
// another: a heartbeat is never refused because the connection's orders or lookups wait (a refused
// heartbeat lets the switch fire).
import { ApiError } from '../errors.js';

export interface Lane {
  readonly max: number;
  readonly serial: boolean;
  /** What the refusal says when the lane is full. */
  readonly full: string;
}

/** Orders of one connection awaiting the engine at once. */
export const MAX_PENDING_ORDERS = 32;
/**
 * Subscription changes of one connection waiting at once (one may wait for its snapshot's reads:
 * the engine's live orders, the database). Without it a slow engine let the queue grow by the
 * message rate for as long as it was slow, and answered changes minutes late.
 */
export const MAX_PENDING_CHANGES = 32;
/** Dead man's switch calls of one connection awaiting the switch store (Redis for a fleet) at once. */
export const MAX_PENDING_SWITCH_CALLS = 32;
/** order.status lookups of one connection awaiting at once (budgets, the database mirror). */
export const MAX_PENDING_LOOKUPS = 32;

export const LANES = {
  changes: { max: MAX_PENDING_CHANGES, serial: true, full: `at most ${MAX_PENDING_CHANGES} subscription changes of one connection may wait at once` },
  orders: { max: MAX_PENDING_ORDERS, serial: false, full: `at most ${MAX_PENDING_ORDERS} orders of one connection may await the engine at once` },
  switch: { max: MAX_PENDING_SWITCH_CALLS, serial: false, full: `at most ${MAX_PENDING_SWITCH_CALLS} switch calls of one connection may wait at once` },
  lookups: { max: MAX_PENDING_LOOKUPS, serial: false, full: `at most ${MAX_PENDING_LOOKUPS} order.status lookups of one connection may wait at once` },
} as const satisfies Record<string, Lane>;

export type LaneName = keyof typeof LANES;

const SETTLED: Promise<void> = Promise.resolve();

/**
 * One connection's lanes: a count per lane and the tail of each serial lane. Made on the
 * connection's first call (an idle connection holds none).
 */
export class ConnectionLanes {
  private readonly pending = new Map<LaneName, number>();
  private readonly tails = new Map<LaneName, Promise<void>>();

  /** Queues `run` in its lane (it must not reject), or throws the lane's `rate_limited` refusal. */
  enter(name: LaneName, run: () => Promise<void>): void {
    const lane: Lane = LANES[name];
    const pending = this.pending.get(name) ?? 0;
    if (pending >= lane.max) throw new ApiError('rate_limited', lane.full, { retryAfterS: 1 });
    this.pending.set(name, pending + 1);
    const done = () => {
      this.pending.set(name, this.pending.get(name)! - 1);
    };
    if (!lane.serial) {
      void run().finally(done);
      return;
    }
    const tail = (this.tails.get(name) ?? SETTLED).then(run).finally(done);
    this.tails.set(name, tail);
  }
}
