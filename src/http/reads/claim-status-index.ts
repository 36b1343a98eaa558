// The status of every engine claim of one family (user batches or manifests), kept in memory so
// that `status=match|mismatch|pending` answers a full page (or a truthful empty one) in one request
// whatever the history's length (docs/adr/0101-verification-filters-from-a-claim-status-index.md).
//
// No index of the database can serve the filter: a claim's status compares a row of `events` with a
// row of a chain table, and the gateway never writes the database. So the gateway keeps, per claim,
// its seq, party and status (13 bytes; about 1.5 MB per 100 000 claims), built from the database on
// first use and brought up to date before every filtered page:
//   - claims above the newest one covered are read and checked (events (kind, seq) range, one pk
//     probe of the chain table each); a claim head below the covered one (a replaced history) starts
//     the index again from scratch;
//   - pending claims are checked again (the chain records them later): the index keeps their chain
//     key and claimed root, so only the chain table is probed (docs/adr/0103-…);
//   - a match or mismatch is final: the chain tables are append-only records of what the chain did.
// Concurrent pages share one refresh that started after they arrived (SharedRead), so no page is
// chosen from a state older than its request. The chosen claims are then read back from the
// database with their status recomputed; a claim whose status changed meanwhile is corrected and the
// page chosen again, so every item returned has the asked status as the database says now. A page of
// pending claims needs no read-back: the refresh has just probed each of them, and the index holds
// their key and claimed root (docs/adr/0103-verification-pages-from-the-claim-index.md).
import { SharedRead } from '../../engine/shared-read.js';
import type { Queryable } from '../../db/database.js';
import type { Page } from '../../db/queries/page.js';
import {
  claimHead,
  claimOf,
  claimsAfter,
  claimsOnChain,
  verificationRows,
  type ClaimFamily,
  type ClaimKey,
  type ClaimRow,
  type ClaimStatus,
  type VerificationStatus,
} from '../../db/queries/verifications.js';

const CODE: Record<VerificationStatus, number> = { match: 1, mismatch: 2, pending: 3 };
/** Claims read per statement while the index grows (first build: several statements). */
const GROW_BATCH = 50_000;
/** Pending claims re-checked per statement. */
const PROBE_BATCH = 5_000;
/** Times a page is chosen again when statuses changed under it. */
const ATTEMPTS = 4;

export interface StatusFilter {
  status: VerificationStatus;
  party?: string | undefined;
  before?: number | undefined;
  limit: number;
}

export class ClaimStatusIndex {
  private seqs = new Float64Array(1024);
  private codes = new Uint8Array(1024);
  private partyOf = new Int32Array(1024);
  private count = 0;
  private readonly parties = new Map<string, number>();
  /** Pending claims with their chain key and claimed root: what the refresh probes the chain with. */
  private readonly pending = new Map<number, ClaimKey>();
  /** Newest claim seq covered (0: none). */
  private head = 0;
  /** The SQL handle of the latest caller, which the next refresh runs on (all callers share one pool). */
  private sql: Queryable | null = null;
  private readonly refresher = new SharedRead<void>(() => this.load(this.sql!));

  constructor(private readonly family: ClaimFamily) {}

  /** Claims covered so far (for tests and metrics). */
  get size(): number {
    return this.count;
  }

  /** A page of the claims with `f.status`, newest first, each row read back from the database. */
  async page<T extends { engineSeq: number; status: VerificationStatus }>(sql: Queryable, f: StatusFilter): Promise<Page<T>> {
    await this.refresh(sql);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const chosen = this.select(f);
      const wanted = chosen.slice(0, f.limit);
      // Pending claims were each checked against the chain by the refresh just made (started after
      // the request arrived), and the index holds everything their rows show: no read-back.
      const pending = f.status === 'pending' ? this.pendingRows<T>(wanted) : null;
      if (pending) return { items: pending, nextCursor: chosen.length > f.limit ? wanted[wanted.length - 1]! : null };
      const rows = wanted.length > 0 ? await verificationRows<T>(sql, this.family, wanted) : [];
      if (rows.length === wanted.length && rows.every((r) => r.status === f.status)) {
        return { items: rows, nextCursor: chosen.length > f.limit ? wanted[wanted.length - 1]! : null };
      }
      // A claim changed status (or left the history) since it was indexed: correct, refresh, choose again.
      for (const r of rows) this.set(r.engineSeq, r.status, claimOf(r as unknown as ClaimRow));
      if (rows.length !== wanted.length) this.reset();
      await this.refresh(sql);
    }
    throw new Error(`claim statuses of ${this.family} kept changing while a page was chosen`);
  }

  /** The rows of these pending claims as the database would give them; null if one is not held. */
  private pendingRows<T>(seqs: readonly number[]): T[] | null {
    const rows: unknown[] = [];
    for (const seq of seqs) {
      const c = this.pending.get(seq);
      if (!c) return null;
      rows.push(
        this.family === 'user-batches'
          ? { party: c.party, userSeq: c.key, engineRoot: c.root, chainRoot: null, status: 'pending', engineSeq: seq, committedAt: null }
          : { batchNum: c.key, engineRoot: c.root, chainRoot: null, status: 'pending', engineSeq: seq, committedAt: null },
      );
    }
    return rows as T[];
  }

  private refresh(sql: Queryable): Promise<void> {
    this.sql = sql;
    return this.refresher.read('claims');
  }

  /**
   * The claim head and the pending claims' chain records are read at once (two statements in
   * parallel, each started after the callers arrived); new claims, if any, after that.
   */
  private async load(sql: Queryable): Promise<void> {
    const pending = [...this.pending.values()];
    const probes: Array<Promise<ClaimStatus[]>> = [];
    for (let i = 0; i < pending.length; i += PROBE_BATCH) probes.push(claimsOnChain(sql, this.family, pending.slice(i, i + PROBE_BATCH)));
    const [head, ...recorded] = await Promise.all([claimHead(sql, this.family), ...probes]);
    for (const batch of recorded) for (const c of batch) this.set(c.seq, c.status);
    if (head === null || head < this.head) this.reset();
    while (head !== null && this.head < head) {
      const claims = await claimsAfter(sql, this.family, this.head, GROW_BATCH);
      if (claims.length === 0) break;
      for (const c of claims) this.append(c);
    }
  }

  /** Up to limit + 1 claim seqs with the status, newest first, below `before`, of `party`. */
  private select(f: StatusFilter): number[] {
    const code = CODE[f.status];
    let party = -1;
    if (f.party !== undefined) {
      const id = this.parties.get(f.party);
      if (id === undefined) return [];
      party = id;
    }
    const out: number[] = [];
    const { seqs, codes, partyOf } = this;
    for (let i = (f.before === undefined ? this.count : this.lowerBound(f.before)) - 1; i >= 0 && out.length <= f.limit; i--) {
      if (codes[i] === code && (party < 0 || partyOf[i] === party)) out.push(seqs[i]!);
    }
    return out;
  }

  private append(c: ClaimStatus & ClaimKey): void {
    if (c.seq <= this.head) return;
    if (this.count === this.seqs.length) this.grow();
    const i = this.count++;
    this.seqs[i] = c.seq;
    this.codes[i] = CODE[c.status];
    this.partyOf[i] = c.party === null ? -1 : this.partyId(c.party);
    if (c.status === 'pending') this.pending.set(c.seq, { seq: c.seq, party: c.party, key: c.key, root: c.root });
    this.head = c.seq;
  }

  /** A claim's status now; `claim` (its key and root) is needed when it becomes pending. */
  private set(seq: number, status: VerificationStatus, claim?: ClaimKey): void {
    const i = this.lowerBound(seq);
    if (i >= this.count || this.seqs[i] !== seq) return;
    this.codes[i] = CODE[status];
    if (status !== 'pending') this.pending.delete(seq);
    else if (claim) this.pending.set(seq, claim);
  }

  private reset(): void {
    this.count = 0;
    this.head = 0;
    this.pending.clear();
    this.parties.clear();
  }

  /** Index of the first claim with seq >= `seq`. */
  private lowerBound(seq: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private partyId(party: string): number {
    let id = this.parties.get(party);
    if (id === undefined) {
      id = this.parties.size;
      this.parties.set(party, id);
    }
    return id;
  }

  private grow(): void {
    const n = this.seqs.length * 2;
    const seqs = new Float64Array(n);
    seqs.set(this.seqs);
    const codes = new Uint8Array(n);
    codes.set(this.codes);
    const partyOf = new Int32Array(n);
    partyOf.set(this.partyOf);
    this.seqs = seqs;
    this.codes = codes;
    this.partyOf = partyOf;
  }
}
