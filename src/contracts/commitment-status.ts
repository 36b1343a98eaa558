// What the gateway's own check of the engine's commitments reports (docs/verification.md): the
// counts and the mismatches /readyz names. A contract type, so that the stream's live view can
// carry it without importing the commitment check itself.
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
  /** The latest mismatches, newest last (at most RECENT). */
  incidents: CommitmentIncident[];
}
