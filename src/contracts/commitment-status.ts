// What the live commitment check reports to /readyz (docs/verification.md): counts and the latest
// mismatches. Implemented by src/commitments/monitor.ts, read by the HTTP edge through LiveView.

/** A mismatch as /readyz shows it. */
export interface CommitmentIncident {
  kind: 'user_batch' | 'manifest';
  /** Seq of the claim event. */
  seq: number;
  party?: string;
  userSeq?: number;
  batchNum?: number;
  firstSeq?: number | null;
  lastSeq?: number | null;
  claimedRoot: string;
  computedRoot: string | null;
  reasons: string[];
}

export interface CommitmentStatus {
  match: number;
  mismatch: number;
  skipped: number;
  /** The latest mismatches, newest last (at most 10). */
  incidents: CommitmentIncident[];
}
