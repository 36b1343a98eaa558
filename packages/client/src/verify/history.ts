// verifyHistory: every user batch of a party, each checked by verifyUserBatch, and the chain of
// batches itself: userSeq 1, 2, 3, … without a hole, each batch's prevRoot equal to the previous
// batch's user root (the first one's to 64 zeros), and no event in two batches.
import type { UserBatch, UserBatchProof } from '../generated/wire.js';
import type { List } from '../types.js';
import { verifyUserBatch, type BatchVerdict } from './verify-batch.js';

export interface HistoryProgress {
  /** Batches checked so far, and how many there are. */
  done: number;
  total: number;
  verified: number;
  pending: number;
  failed: number;
}

export interface HistoryOptions {
  /** Called after each batch (and once at the start, with done 0). */
  onProgress?: (progress: HistoryProgress) => void;
  /** Proofs fetched and verified at once (default 8). */
  concurrency?: number;
  signal?: AbortSignal;
}

export interface ChainBreak {
  userSeq: number;
  message: string;
}

export interface HistoryVerdict {
  party: string;
  /**
   * `verified`: every batch verified and the chain unbroken; `pending`: the same, with batches not
   * on chain yet; `failed` otherwise; `empty`: the party has no batch yet, so nothing was checked
   * (not a proof of anything: a history is verified only once a batch of it is).
   */
  status: 'verified' | 'pending' | 'failed' | 'empty';
  batches: number;
  events: number;
  verified: number;
  pending: number;
  failed: number;
  /** The verdict of each batch, by userSeq. */
  verdicts: BatchVerdict[];
  /** Breaks of the chain of batches (a hole, a prevRoot that does not chain, an event in two batches). */
  chainBreaks: ChainBreak[];
  /** Seq of each event the party's batches hold → the userSeq holding it. */
  eventBatches: Map<number, number>;
}

export interface HistorySource {
  listUserBatches(party: string, query: { since?: number; limit?: number }): Promise<List<UserBatch>>;
  getUserBatchProof(party: string, userSeq: number): Promise<UserBatchProof>;
}

const ZERO = '0'.repeat(64);

export async function verifyHistory(source: HistorySource, party: string, options: HistoryOptions = {}): Promise<HistoryVerdict> {
  // The batches the chain recorded, then the engine's newer claims are found as proofs past the last.
  const recorded: UserBatch[] = [];
  for (let since: number | undefined; ; ) {
    const page = await source.listUserBatches(party, { ...(since !== undefined ? { since } : {}), limit: 1000 });
    recorded.push(...page.items);
    if (page.nextCursor === null || page.items.length === 0) break;
    since = page.nextCursor;
  }
  const total = recorded.length;
  const progress: HistoryProgress = { done: 0, total, verified: 0, pending: 0, failed: 0 };
  options.onProgress?.({ ...progress });
  const proofs: UserBatchProof[] = new Array(total);
  const verdicts: BatchVerdict[] = new Array(total);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      if (options.signal?.aborted) throw new Error('verifyHistory aborted');
      const i = next++;
      const proof = await source.getUserBatchProof(party, recorded[i]!.userSeq);
      proofs[i] = proof;
      const verdict = await verifyUserBatch(proof);
      verdicts[i] = verdict;
      progress.done++;
      progress[verdict.status === 'verified' ? 'verified' : verdict.status === 'pending' ? 'pending' : 'failed']++;
      options.onProgress?.({ ...progress });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 8, total)) }, worker));

  const chainBreaks: ChainBreak[] = [];
  const eventBatches = new Map<number, number>();
  let events = 0;
  // The roots a next batch may chain on: the chain's record, and the root recomputed from the events
  // when it differs (that difference is already a failed batch; one incident is reported once).
  let previousRoots = [ZERO];
  for (let i = 0; i < total; i++) {
    const proof = proofs[i]!;
    const userSeq = recorded[i]!.userSeq;
    if (userSeq !== i + 1) chainBreaks.push({ userSeq, message: `user batch ${i + 1} is missing (found ${userSeq})` });
    const prevRoot = proof.chain?.prevRoot ?? recorded[i]!.prevRoot;
    if (!previousRoots.includes(prevRoot)) chainBreaks.push({ userSeq, message: `prevRoot ${prevRoot} does not chain on the previous user root ${previousRoots[0]}` });
    const verdict = verdicts[i]!;
    previousRoots = [proof.chain?.userRoot ?? recorded[i]!.root];
    if (verdict.status === 'failed' && verdict.step === 'userRoot' && verdict.actual) previousRoots.push(verdict.actual);
    for (const e of proof.events) {
      const holder = eventBatches.get(e.seq);
      if (holder !== undefined) chainBreaks.push({ userSeq, message: `event ${e.seq} is also in user batch ${holder}` });
      eventBatches.set(e.seq, userSeq);
      events++;
    }
  }
  const status = total === 0 ? 'empty' : progress.failed > 0 || chainBreaks.length > 0 ? 'failed' : progress.pending > 0 ? 'pending' : 'verified';
  return { party, status, batches: total, events, verified: progress.verified, pending: progress.pending, failed: progress.failed, verdicts, chainBreaks, eventBatches };
}
