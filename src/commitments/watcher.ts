// Recomputes the engine's commitments from the events as they stream in (docs/verification.md,
// "The gateway's own check"). Each party has its pending user batch as a PendingTree; when the
// party's `engine.user_batch_committed` arrives, the claim is compared with the tree's root, count
// and the party's previous root, and the tree starts again. Each `outbound.batch_committed` is
// compared with the manifest over the user roots the gateway computed itself since the last one.
//
// A batch whose beginning this process did not see cannot be recomputed: its claim is reported
// `skipped`, never `mismatch`. The watcher knows where every party's batch begins when it has
// seen the history from seq 1, when it was aligned on a manifest (`alignAfter`, the database seed
// of src/commitments/seed.ts), or, for one party, after that party's previous claim. Every
// manifest aligns it too: the engine commits every party with new events at once, its claims
// immediately followed by their manifest, so after a manifest every batch starts afresh.
import { byParty, COMMITMENT_KINDS, holdersOf, isHash, ZERO_ROOT, type CommittedEvent } from '../../packages/client/src/verify/scheme.js';
import { eventLeaf, manifestRoot } from './hash.js';
import { PendingTree } from './pending-tree.js';

export type CheckResult = 'match' | 'mismatch' | 'skipped';

export interface UserBatchCheck {
  kind: 'user_batch';
  result: CheckResult;
  party: string;
  userSeq: number;
  /** Seq of the claim event. */
  seq: number;
  /** Lowest and highest seq of the events the gateway saw in the batch (null when none). */
  firstSeq: number | null;
  lastSeq: number | null;
  claimed: { root: string; prevRoot: string; eventCount: number };
  computed: { root: string; eventCount: number } | null;
  /** What differs, on a mismatch. */
  reasons: string[];
}

export interface ManifestCheck {
  kind: 'manifest';
  result: CheckResult;
  batchNum: number;
  seq: number;
  claimed: { root: string; prevRoot: string; userBatchCount: number };
  computed: { root: string; userBatchCount: number } | null;
  reasons: string[];
}

export type CommitmentCheck = UserBatchCheck | ManifestCheck;

interface OpenBatch {
  tree: PendingTree;
  firstSeq: number;
  lastSeq: number;
}

interface ClosedUserBatch {
  party: string;
  root: string | null;
  firstSeq: number | null;
  lastSeq: number | null;
}

/**
 * What the next claim must chain on: the previous number, and the previous root. After a mismatch
 * both the claimed and the recomputed root are accepted, so one wrong claim is one incident.
 */
interface Link {
  num: number;
  roots: string[];
}

const START: Link = { num: 0, roots: [ZERO_ROOT] };

const USER_CLAIM = 'engine.user_batch_committed';
const MANIFEST_CLAIM = 'outbound.batch_committed';

export class CommitmentWatcher {
  private open = new Map<string, OpenBatch>();
  /** Every party's batch start is known (history start, a seed, or a manifest seen). */
  private aligned = false;
  /** While not aligned: the parties whose previous claim was seen. */
  private readonly knownParties = new Set<string>();
  /** Each party's last claim (the next one must chain on it). */
  private readonly chains = new Map<string, Link>();
  /** Chains are known from the history's start: a party without one has had no batch yet. */
  private fromStart = false;
  private sinceManifest: ClosedUserBatch[] = [];
  /** The user batches since the last manifest were all seen from their start. */
  private manifestComplete = false;
  private lastManifest: Link | null = null;
  private seen = false;

  constructor(private readonly report: (check: CommitmentCheck) => void) {}

  /**
   * Every party's next batch starts after `seq` (a manifest's seq, or 0 for the history's start).
   * Called before the events after `seq` are observed.
   */
  alignAfter(seq: number): void {
    this.clear();
    this.aligned = true;
    this.manifestComplete = true;
    this.fromStart = seq === 0;
    this.seen = true;
  }

  /** The engine's history was replaced: nothing of the old one is known. */
  reset(): void {
    this.clear();
    this.seen = false;
  }

  /** Parties with a pending batch (for tests and metrics). */
  get pendingParties(): number {
    return this.open.size;
  }

  /** Each event once, in seq order. */
  observe(event: CommittedEvent): void {
    if (!this.seen) {
      this.seen = true;
      if (event.seq === 1) this.alignAfter(0);
    }
    if (event.kind === USER_CLAIM) return this.userClaim(event);
    if (event.kind === MANIFEST_CLAIM) return this.manifestClaim(event);
    if (COMMITMENT_KINDS.has(event.kind)) return;
    const holders = holdersOf(event);
    if (holders.length === 0) return;
    const leaf = eventLeaf(event);
    for (const party of holders) {
      let batch = this.open.get(party);
      if (!batch) {
        batch = { tree: new PendingTree(), firstSeq: event.seq, lastSeq: event.seq };
        this.open.set(party, batch);
      }
      batch.tree.push(leaf);
      batch.lastSeq = event.seq;
    }
  }

  private clear(): void {
    this.open = new Map();
    this.aligned = false;
    this.knownParties.clear();
    this.chains.clear();
    this.fromStart = false;
    this.sinceManifest = [];
    this.manifestComplete = false;
    this.lastManifest = null;
  }

  private userClaim(event: CommittedEvent): void {
    const party = event.party;
    const p = event.payload;
    if (typeof party !== 'string') return;
    const claimed = { root: String(p.root), prevRoot: String(p.prevRoot), eventCount: Number(p.eventCount) };
    const userSeq = Number(p.userSeq);
    const batch = this.open.get(party);
    this.open.delete(party);
    const known = this.aligned || this.knownParties.has(party);
    this.knownParties.add(party);
    const previous = this.chains.get(party) ?? (this.fromStart ? START : null);
    const firstSeq = batch?.firstSeq ?? null;
    const lastSeq = batch?.lastSeq ?? null;
    if (!known) {
      this.chains.set(party, { num: userSeq, roots: [claimed.root] });
      this.sinceManifest.push({ party, root: null, firstSeq, lastSeq });
      this.report({ kind: 'user_batch', result: 'skipped', party, userSeq, seq: event.seq, firstSeq, lastSeq, claimed, computed: null, reasons: [] });
      return;
    }
    const computed = { root: batch ? batch.tree.root() : ZERO_ROOT, eventCount: batch ? batch.tree.count : 0 };
    const reasons: string[] = [];
    if (!isHash(claimed.root) || claimed.root !== computed.root) reasons.push('root');
    if (claimed.eventCount !== computed.eventCount) reasons.push('eventCount');
    if (previous && !previous.roots.includes(claimed.prevRoot)) reasons.push('prevRoot');
    if (previous && userSeq !== previous.num + 1) reasons.push('userSeq');
    this.chains.set(party, { num: userSeq, roots: [...new Set([computed.root, claimed.root])] });
    this.sinceManifest.push({ party, root: computed.root, firstSeq, lastSeq });
    this.report({
      kind: 'user_batch',
      result: reasons.length === 0 ? 'match' : 'mismatch',
      party,
      userSeq,
      seq: event.seq,
      firstSeq,
      lastSeq,
      claimed,
      computed,
      reasons,
    });
  }

  private manifestClaim(event: CommittedEvent): void {
    const p = event.payload;
    const batchNum = Number(p.batchNum);
    const claimed = { root: String(p.root), prevRoot: String(p.prevRoot), userBatchCount: Number(p.userBatchCount) };
    const members = this.sinceManifest.sort((a, b) => byParty(a.party, b.party));
    const complete = this.manifestComplete && members.every((m) => m.root !== null);
    let chainRoots = [claimed.root];
    if (!complete) {
      this.report({ kind: 'manifest', result: 'skipped', batchNum, seq: event.seq, claimed, computed: null, reasons: [] });
    } else {
      const computed = { root: manifestRoot(members.map((m) => m.root!)), userBatchCount: members.length };
      const reasons: string[] = [];
      if (claimed.root !== computed.root) reasons.push('root');
      if (claimed.userBatchCount !== computed.userBatchCount) reasons.push('userBatchCount');
      const seqs = members.flatMap((m) => (m.firstSeq === null ? [] : [m.firstSeq, m.lastSeq!]));
      if (seqs.length > 0 && (Number(p.firstSeq) !== Math.min(...seqs) || Number(p.lastSeq) !== Math.max(...seqs))) reasons.push('seqRange');
      const previous = this.lastManifest ?? (this.fromStart ? START : null);
      if (previous && !previous.roots.includes(claimed.prevRoot)) reasons.push('prevRoot');
      if (previous && batchNum !== previous.num + 1) reasons.push('batchNum');
      this.report({ kind: 'manifest', result: reasons.length === 0 ? 'match' : 'mismatch', batchNum, seq: event.seq, claimed, computed, reasons });
      chainRoots = [...new Set([computed.root, claimed.root])];
    }
    // From here on every party's batch starts afresh (see the header).
    if (!this.aligned) {
      this.open = new Map();
      this.aligned = true;
      this.knownParties.clear();
    }
    this.lastManifest = { num: batchNum, roots: chainRoots };
    this.sinceManifest = [];
    this.manifestComplete = true;
  }
}
