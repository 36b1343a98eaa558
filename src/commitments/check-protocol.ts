// The messages between the live path and the commitment check's worker thread (check-thread.ts,
// check-worker.ts). Events travel as their JSON texts, as they arrived: an array of strings is the
// cheapest thing to post (measured: about half the main-thread time of joining them into one string).
import type { CommitmentCheck } from './watcher.js';

export type ToWorker =
  /** Event texts in seq order; `chars` is their total length. */
  | { t: 'events'; texts: string[]; chars: number }
  /** Every party's next batch starts after `after` (the seed; see CommitmentWatcher.alignAfter). */
  | { t: 'align'; after: number }
  /** Forget everything: the history was replaced, or events were dropped (a gap). */
  | { t: 'reset' };

/**
 * The worker's answer: the checks it made, and how many characters it has consumed since its last
 * answer. It answers at once when it has checks, otherwise after every MiB or 10 ms of work, so the
 * live path takes a few answers per second rather than one per batch.
 */
export interface FromWorker {
  checks: CommitmentCheck[];
  consumed: number;
}
