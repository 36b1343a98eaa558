// verifyHistory: every user batch of a party, each checked by verifyUserBatch, and the chain of
// batches itself: userSeq 1, 2, 3, … without a hole, each batch's prevRoot equal to the previous
// batch's user root (the first one's to 64 zeros), and no event in two batches.
import type { UserBatch, UserBatchProof } from '../generated/wire.js';
import type { List } from '../types.js';
import { RESPONSE_BYTES, RESPONSE_LEAVES } from '../transport.js';
import { GatewayError } from '../errors.js';
import { leavesOfPage } from './page-leaves.js';
import { loadSha256 } from './sha256-sync.js';
import { verifyUserBatchFrom, type BatchVerdict } from './verify-batch.js';

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
  /**
   * Called as each batch is checked, in whatever order they are: `index` is its place in the
   * history (the verdicts' order), `verdict` the one the final verdict holds at that place.
   */
  onBatch?: (index: number, verdict: BatchVerdict) => void;
  /**
   * Called once the proof of every recorded batch has been fetched (the last ones may still be
   * being checked), with the recorded batches, oldest first: what depends on the gateway having
   * served the whole history can start then.
   */
  onFetched?: (recorded: readonly UserBatch[]) => void;
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
  /**
   * The proofs of the party's recorded batches after userSeq `since`, oldest first, a page at a time
   * (`nextCursor`: pass back as `since`). When present, the history is fetched through it (a few
   * requests instead of one per batch); a gateway without the route (404) falls back to one by one.
   */
  listUserBatchProofs?(party: string, query: { since?: number; limit?: number }): Promise<List<UserBatchProof>>;
}

/** Runs `f` over `items`, `n` at a time. */
async function pool<T>(items: readonly T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, async () => {
    while (next < items.length) await f(items[next++]!);
  }));
}

/** The gateway's page of proofs (ADR 0250): at most PAGE_BATCHES batches, ending after the batch that brings its events to PAGE_EVENTS. */
const PAGE_BATCHES = 100;
const PAGE_EVENTS = 10_000;
/** Pages fetched ahead of the one being checked (the gateway builds the next while this one is checked): more at once only stretch each past the database deadline on a busy gateway. */
const PAGES_AHEAD = 1;
/**
 * A page the gateway refused for want of room in its build lane (429 `budget_exhausted`, budget
 * `proof_pages`: this client address has other pages in progress, several verifications behind one
 * address say) is asked again after its Retry-After, at most this many times.
 */
const BUSY_PAGE_RETRIES = 30;

/** Whether `err` is the gateway's refusal of a page for want of room (`proof_pages`), and how long it asks to wait (ms). */
function busyPageWait(err: unknown): number | null {
  if (!(err instanceof GatewayError) || err.status !== 429 || err.code !== 'budget_exhausted' || err.body.budget !== 'proof_pages') return null;
  const seconds = Number(err.body.retryAfterS);
  return Math.min(5, Number.isFinite(seconds) && seconds > 0 ? seconds : 1) * 1000;
}

const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('verifyHistory aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(new Error('verifyHistory aborted'));
    };
    signal?.addEventListener('abort', stop, { once: true });
  });

interface PageRange {
  /** The userSeq before the range (passed as `since`). */
  since: number;
  lastUserSeq: number;
  batches: number;
}

/** The recorded batches cut into the gateway's pages, by the chain's event counts as it counts them. */
function pageRanges(recorded: readonly UserBatch[]): PageRange[] {
  const ranges: PageRange[] = [];
  let since = 0;
  let batches = 0;
  let events = 0;
  recorded.forEach((b, i) => {
    batches++;
    events += Math.max(0, b.eventCount);
    if (batches === PAGE_BATCHES || events >= PAGE_EVENTS || i === recorded.length - 1) {
      ranges.push({ since, lastUserSeq: b.userSeq, batches });
      since = b.userSeq;
      batches = 0;
      events = 0;
    }
  });
  return ranges;
}

/** Is this the answer of a gateway that lacks the route? */
const missingRoute = (err: unknown): boolean => typeof err === 'object' && err !== null && (err as { status?: unknown }).status === 404;

const ZERO = '0'.repeat(64);

export async function verifyHistory(source: HistorySource, party: string, options: HistoryOptions = {}): Promise<HistoryVerdict> {
  // The WebAssembly hasher loads while the lists come (it resolves either way): the pages' leaves are
  // hashed as they arrive, and before it was awaited here the first verification of a page hashed
  // most of them with the JavaScript one (a quarter of a second of 100 000 events in Chromium).
  const hasher = loadSha256();
  // The batches the chain recorded, then the engine's newer claims are found as proofs past the last.
  const recorded: UserBatch[] = [];
  for (let since: number | undefined; ; ) {
    const page = await source.listUserBatches(party, { ...(since !== undefined ? { since } : {}), limit: 1000 });
    recorded.push(...page.items);
    if (page.nextCursor === null || page.items.length === 0) break;
    since = page.nextCursor;
  }
  const total = recorded.length;
  let told = false;
  const fetched = (): void => {
    if (told) return;
    told = true;
    options.onFetched?.(recorded);
  };
  if (total === 0) fetched();
  await hasher;
  const progress: HistoryProgress = { done: 0, total, verified: 0, pending: 0, failed: 0 };
  options.onProgress?.({ ...progress });
  const proofs: UserBatchProof[] = new Array(total);
  const verdicts: BatchVerdict[] = new Array(total);
  const indexOf = new Map(recorded.map((b, i) => [b.userSeq, i]));
  // The leaves of the proofs that came in a page whose bytes the source kept (GatewayClient does),
  // hashed from the bytes they arrived as (page-leaves.ts, ADR 0370; in the worker, ADR 0385).
  const leavesOf = new WeakMap<UserBatchProof, Uint8Array>();
  const check = async (i: number, proof: UserBatchProof): Promise<void> => {
    if (options.signal?.aborted) throw new Error('verifyHistory aborted');
    proofs[i] = proof;
    const verdict = await verifyUserBatchFrom(proof, leavesOf.get(proof) ?? null);
    verdicts[i] = verdict;
    options.onBatch?.(i, verdict);
    progress.done++;
    progress[verdict.status === 'verified' ? 'verified' : verdict.status === 'pending' ? 'pending' : 'failed']++;
    options.onProgress?.({ ...progress });
  };
  const concurrency = options.concurrency ?? 8;
  // Pages of proofs, planned from the recorded list by the gateway's own page rule (ADR 0250) so
  // that several are fetched at once (PAGES_AHEAD in flight while one is checked), each proof checked
  // exactly as one fetched alone. A range the gateway cuts shorter is followed by its nextCursor; a
  // proof missing from the pages (recorded meanwhile) is fetched alone below.
  if (source.listUserBatchProofs && total > 0) {
    const listOnce = source.listUserBatchProofs.bind(source);
    const list = async (p: string, query: { since: number; limit: number }): Promise<List<UserBatchProof>> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await listOnce(p, query);
        } catch (err) {
          const wait = busyPageWait(err);
          if (wait === null || attempt >= BUSY_PAGE_RETRIES) throw err;
          await pause(wait, options.signal);
        }
      }
    };
    const ranges = pageRanges(recorded);
    const fetchedSeqs = new Set<number>();
    const fetchRange = async (r: PageRange): Promise<UserBatchProof[]> => {
      const items: UserBatchProof[] = [];
      for (let since = r.since; ; ) {
        const page = await list(party, { since, limit: Math.min(PAGE_BATCHES, r.batches) });
        items.push(...page.items);
        for (const p of page.items) if (indexOf.has(p?.userSeq)) fetchedSeqs.add(p.userSeq);
        const kept = page as { [RESPONSE_BYTES]?: unknown; [RESPONSE_LEAVES]?: Array<Uint8Array | null> | null };
        const bytes = kept[RESPONSE_BYTES];
        // Hashed already by the sender (the verification worker, ADR 0385; null: not scanned), else here.
        const leaves = RESPONSE_LEAVES in kept ? kept[RESPONSE_LEAVES]! : bytes instanceof Uint8Array ? leavesOfPage(bytes) : null;
        if (leaves !== null && leaves.length === page.items.length) {
          page.items.forEach((proof, k) => {
            const l = leaves[k];
            if (l && typeof proof === 'object' && proof !== null) leavesOf.set(proof, l);
          });
        }
        const last = page.items.at(-1)?.userSeq;
        // A cursor that does not move on ends the range too: what it lacks is fetched alone below.
        if (page.nextCursor === null || last === undefined || last >= r.lastUserSeq || page.nextCursor <= since) return items;
        since = page.nextCursor;
      }
    };
    const inFlight: Array<Promise<UserBatchProof[]>> = [];
    let planned = 0;
    const fill = (): void => {
      while (planned < ranges.length && inFlight.length < PAGES_AHEAD + 1) {
        const p = fetchRange(ranges[planned++]!);
        p.catch(() => {}); // awaited in its turn; an early failure must not go unhandled
        inFlight.push(p);
      }
    };
    try {
      fill();
      while (inFlight.length > 0) {
        const items = await inFlight.shift()!;
        fill();
        if (inFlight.length === 0 && fetchedSeqs.size === total) fetched();
        const mine = items.filter((p) => indexOf.has(p.userSeq) && proofs[indexOf.get(p.userSeq)!] === undefined);
        await pool(mine, concurrency, (p) => check(indexOf.get(p.userSeq)!, p));
      }
    } catch (err) {
      if (!missingRoute(err) || progress.done > 0) throw err;
    }
  }
  const rest = recorded.map((_, i) => i).filter((i) => proofs[i] === undefined);
  let toFetch = rest.length;
  if (toFetch === 0) fetched();
  await pool(rest, concurrency, async (i) => {
    const proof = await source.getUserBatchProof(party, recorded[i]!.userSeq);
    if (--toFetch === 0) fetched();
    await check(i, proof);
  });

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
