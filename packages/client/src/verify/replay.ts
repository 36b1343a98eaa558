// The replay of a party's verified batches, in order from the first, stopping at the first batch
// that is not verified (docs/verification.md "Your account"). verifyAccount advances it as each
// batch is checked, so the replay runs while later pages are still on their way (the main thread
// waits for them anyway, ADR 0385) instead of all at the end; checkAccount finishes it over the
// whole history. Batches are replayed in the history's order whatever order they are checked in,
// so the ledger it ends with is the one a replay of the finished history gives. A proof told with
// its verdict is held only until it is replayed (ADR 0386): in order, that is at once.
import type { UserBatchProof } from '../generated/wire.js';
import { Ledger, type LedgerEvent } from './ledger.js';
import type { BatchVerdict } from './verify-batch.js';

export class Replay {
  readonly ledger: Ledger;
  /** The seq of the last event replayed (0: none). */
  committedSeq = 0;
  /** The first batch not verified, where the replay stopped; null while it has not. */
  stoppedAt: BatchVerdict | null = null;
  /** The verdicts known, by the batch's place in the history. */
  private readonly known: Array<BatchVerdict | undefined> = [];
  /** The proofs told with their verdicts and not replayed yet, by place. */
  private readonly held = new Map<number, UserBatchProof>();
  /** The place of the next batch to replay. */
  private next = 0;

  constructor(
    readonly party: string,
    keep: number,
    /** The proof a batch's events are taken from, by userSeq, for a batch told without one. */
    private readonly proofOf: (userSeq: number) => UserBatchProof | undefined = () => undefined,
  ) {
    this.ledger = new Ledger(party, keep);
  }

  /**
   * The batch at `index` of the history was checked (on `proof`, when given: held until it is
   * replayed): replays every batch from the next one on whose verdict is known.
   */
  checked(index: number, verdict: BatchVerdict, proof?: UserBatchProof): void {
    if (this.known[index] === undefined) {
      this.known[index] = verdict;
      if (proof !== undefined && index >= this.next) this.held.set(index, proof);
    }
    this.advance();
  }

  /** The whole history's verdicts, by place: replays what is left. */
  finish(verdicts: readonly BatchVerdict[]): this {
    verdicts.forEach((v, i) => (this.known[i] ??= v));
    this.advance();
    return this;
  }

  private advance(): void {
    for (let v = this.known[this.next]; v !== undefined && this.stoppedAt === null; v = this.known[this.next]) {
      if (v.status !== 'verified') {
        this.stoppedAt = v;
        return;
      }
      const proof = this.held.get(this.next) ?? this.proofOf(v.userSeq);
      this.held.delete(this.next);
      for (const e of proof?.events ?? []) {
        this.ledger.apply(e as LedgerEvent);
        this.committedSeq = e.seq;
      }
      this.next++;
    }
  }
}
