// The lane where pages of proofs are built (GET /v1/users/{party}/user-batches/proofs): the
// gateway's CPU, shared by every client, given out fairly (ADR 0379).
import { FairShare, type FairTicket, type Flow } from '../../engine/fair-share.js';
import { ApiError } from '../errors.js';

/** A page's share of the build lane: its events in thousands (a page of 10 000 events costs 10, one of a single small batch 1). */
const buildCost = (events: number): number => Math.max(1, Math.ceil(events / 1000));

/**
 * The pages being built, one at a time, in a fair order between client addresses and, within one,
 * between parties (deficit round robin by the events to build: engine/fair-share.ts, the engine
 * room's own order). A client verifying a history asks for the next page while it checks one
 * (history.ts, PAGES_AHEAD), so a gateway with no kept answer has a page to build and the next to
 * read: building in slices lets the next page's statements go to the database and its rows come in
 * while this one is built, and one page at a time keeps the first asked the first answered within a
 * party (two builds taking turns would delay both). The lane is the gateway's CPU, shared by every
 * client: one address asking many cold pages at once waits behind its own, not in front of the
 * others, and past PROOF_BUILDS_QUEUED_PER_IP waiting pages its next is refused, 429
 * `budget_exhausted` (`proof_builds`), before its reads.
 */
export class BuildLane {
  private readonly share: FairShare;

  constructor(private readonly queued: number) {
    this.share = new FairShare({ capacity: 1, addressInFlight: 1, addressQueue: queued });
  }

  /** Refuses at once when `address` has no room left in the lane (asked before the page's reads). */
  admit(address: string): void {
    if (this.share.room(address) === 0) throw this.refusal();
  }

  run<T>(flow: Flow, events: number, build: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let ticket: FairTicket | null = null;
      // `start` may run inside submit, before `ticket` is set: `done` runs after build's first await at the earliest.
      ticket = this.share.submit(flow, () => void build().then(resolve, reject).finally(() => ticket!.done()), buildCost(events));
      if (ticket === null) reject(this.refusal());
    });
  }

  private refusal(): ApiError {
    return new ApiError(
      'budget_exhausted',
      `this client address has ${this.queued} pages of proofs waiting to be built (PROOF_BUILDS_QUEUED_PER_IP); ask the next once one is answered`,
      { budget: 'proof_builds', retryAfterS: 1 },
    );
  }
}
