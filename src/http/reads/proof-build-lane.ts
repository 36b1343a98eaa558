// The lane where pages of proofs are built (GET /v1/users/{party}/user-batches/proofs): the
// gateway's CPU, shared by every client, given out fairly (ADR 0379).
import { FairShare, type Flow } from '../../fair-share.js';
import { InProgress } from '../in-progress.js';
import { ApiError } from '../errors.js';

/** A page's share of the build lane: its events in thousands (a page of 10 000 events costs 10, one of a single small batch 1). */
const buildCost = (events: number): number => Math.max(1, Math.ceil(events / 1000));

/**
 * The pages being built, one at a time, in a fair order between client addresses and, within one,
 * between parties (deficit round robin by the events to build: fair-share.ts, the engine room's own
 * order). A client verifying a history asks for the next pages while it checks one (history.ts,
 * PAGES_AHEAD: three in flight), so a gateway with no kept answer has a page to build and the next
 * to read: building in slices lets the next page's statements go to the database and its rows come
 * in while this one is built, and one page at a time keeps the first asked the first answered
 * within a party (two builds taking turns would delay both). The lane is the gateway's CPU, shared
 * by every client: one address asking many cold pages at once waits behind its own, not in front of
 * the others. What one address has in progress (read or built) is bounded by PROOF_PAGES_PER_IP: one
 * more page is refused before its reads, 429 `budget_exhausted` (`proof_pages`), so its statements
 * do not crowd the database pool either.
 */
export class BuildLane {
  private readonly share = new FairShare({ capacity: 1, addressInFlight: 1, addressQueue: Number.POSITIVE_INFINITY });
  private readonly inProgress = new InProgress();

  constructor(private readonly perAddress: number) {}

  /**
   * Counts a page of `address` in progress (its reads and its build) until the returned release is
   * called (once, when it is answered or failed); refuses it at once when the address already has
   * PROOF_PAGES_PER_IP in progress.
   */
  enter(address: string): () => void {
    const release = this.inProgress.enter(address, this.perAddress);
    if (release === null) throw this.refusal();
    return release;
  }

  /** Builds when the fair order comes to this page; `events`, the rows it builds from, is its cost. */
  async run<T>(flow: Flow, events: number, build: () => Promise<T>): Promise<T> {
    // Never refused (the queue is unbounded): what waits is bounded by `enter`.
    const turn = this.share.acquire(flow, buildCost(events))!;
    await turn.started;
    try {
      return await build();
    } finally {
      turn.ticket.done();
    }
  }

  private refusal(): ApiError {
    return new ApiError(
      'budget_exhausted',
      `this client address has ${this.perAddress} pages of proofs in progress (PROOF_PAGES_PER_IP); ask the next once one is answered`,
      { budget: 'proof_pages', retryAfterS: 1 },
    );
  }
}
