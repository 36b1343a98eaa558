// A fair share of the database read pool (docs/security.md "A fair share of the database", ADR 0380).
// The pool's connections are few (DB_POOL_MAX) and every client's reads need one; first come, first
// served, one address sending many slow reads at once queued every other client's read behind all
// of them. Reads now take their turn through the fair share every shared pool uses (fair-share.ts):
// while the pool is full, the next free turn goes round the client addresses with reads waiting and,
// within one, its parties; an address's reads run DB_ADDRESS_IN_FLIGHT at most at once, and past
// DB_ADDRESS_QUEUE of them waiting the next is refused (ReadsExhaustedError, 429 `budget_exhausted`
// `database_reads` at the edge) before it is sent.
//
// Whose read it is comes from the request being served (`readingAs`, set by the HTTP edge and the
// stream's message and upgrade handlers), carried through its awaits by an AsyncLocalStorage so
// the ~70 reads of the routes need not pass it along. A read made outside any of them (the live
// path, the market catalog, the account watermark) is the gateway's own: one flow, never refused.
//
// Guarantees:
// - At most `capacity` reads hold a turn at once (they may run more than one statement each).
// - A read waits no longer than `waitMs` for its turn: then it fails as the database being
//   unavailable for it (503), without marking the database down (it answered every read it was sent).
// - The release a turn gives is idempotent.
import { AsyncLocalStorage } from 'node:async_hooks';
import { FairShare, type Flow } from '../fair-share.js';
import type { Clock, ClockTimer } from '../contracts/clock.js';
import { DatabaseUnavailableError, ReadsExhaustedError } from './errors.js';

const reading = new AsyncLocalStorage<Flow>();

/** Runs `fn` with every read it makes (and its continuations make) counted as `flow`'s. */
export function readingAs<T>(flow: Flow, fn: () => T): T {
  return reading.run(flow, fn);
}

/** The flow of the reads made now: the request's, or the gateway's own. */
export function currentReadFlow(): Flow {
  return reading.getStore() ?? GATEWAY_READS;
}

/** The gateway's own reads: one flow, whose waiting reads are never refused. */
export const GATEWAY_READS: Flow = { address: 'gateway', party: null };

export interface ReadShareOptions {
  /** Reads holding a turn at once (the pool's connections). */
  capacity: number;
  /** Reads of one client address holding a turn at once. */
  addressInFlight: number;
  /** Reads of one client address waiting; past it refused. */
  addressQueue: number;
  /** Longest wait for a turn. */
  waitMs: number;
  clock: Clock;
}

export class ReadShare {
  private readonly share: FairShare;

  constructor(private readonly options: ReadShareOptions) {
    this.share = new FairShare({
      capacity: options.capacity,
      addressInFlight: Math.min(options.addressInFlight, options.capacity),
      addressQueue: options.addressQueue,
      unboundedQueue: [GATEWAY_READS.address],
    });
  }

  /** Reads waiting for a turn now (all addresses). */
  get waiting(): number {
    return this.share.waitingTotal;
  }

  /** Resolves, when the current flow's turn comes, with the release to call once the read is over (idempotent). */
  async turn(flow: Flow = currentReadFlow()): Promise<() => void> {
    const turn = this.share.acquire(flow);
    if (turn === null) throw new ReadsExhaustedError(this.share.held(flow.address).waiting);
    const release = () => turn.ticket.done();
    if (!turn.waiting) return release;
    const { clock, waitMs } = this.options;
    let timer: ClockTimer | null = null;
    const givenUp = new Promise<never>((_, reject) => {
      timer = clock.setTimeout(() => {
        if (turn.ticket.cancel()) reject(new DatabaseUnavailableError(`every connection of the database pool stayed busy for ${waitMs} ms; retry shortly`));
      }, waitMs).unref();
    });
    try {
      await Promise.race([turn.started, givenUp]);
    } finally {
      clock.clearTimeout(timer!);
    }
    return release;
  }
}
