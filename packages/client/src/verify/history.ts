// verifyHistory: every user batch of a party, each checked by verifyUserBatch, and the chain of
// batches itself: userSeq 1, 2, 3, … without a hole, each batch's prevRoot equal to the previous
// batch's user root (the first one's to 64 zeros), and no event in two batches.
import type { UserBatch, UserBatchProof } from '../generated/wire.js';
import type { List } from '../types.js';
import { GatewayError } from '../errors.js';
import { parsedProofPage, readProofPage, type ProofPage, type ProofPageBytes } from './proof-page.js';
import { loadSha256 } from './sha256-sync.js';
import { checkUserBatch, type BatchVerdict } from './verify-batch.js';

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
   * history (the verdicts' order), `verdict` the one the final verdict holds at that place, `proof`
   * the proof it was checked on. verifyHistory keeps nothing of a proof but its roots and its
   * events' seqs (ADR 0386): keep what you need of it here.
   */
  onBatch?: (index: number, verdict: BatchVerdict, proof: UserBatchProof) => void;
  /**
   * Called once the proof of every recorded batch has been fetched (the last ones may still be
   * being checked), with the recorded batches, oldest first, and the seq of the newest one's last
   * event as its proof gives it (null: not known): what depends on the gateway having served the
   * whole history can start then.
   */
  onFetched?: (recorded: readonly UserBatch[], lastSeq: number | null) => void;
  /** Proofs fetched and verified at once when they are fetched one by one (default 8); pages are read a proof at a time. */
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
  /**
   * The same pages as the bytes the gateway sent (and their scan, when the source made it:
   * GatewayClient's verification worker does). When present, the pages are fetched through it and
   * read a proof at a time, each let go once checked (ADR 0386), instead of through listUserBatchProofs.
   */
  getUserBatchProofPage?(party: string, query: { since?: number; limit?: number }): Promise<ProofPageBytes>;
}

/** What the check of the chain of batches needs of a proof, kept once it is checked in place of the proof. */
interface Link {
  prevRoot: string;
  userRoot: string;
  seqs: number[];
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
/**
 * Pages fetched ahead of the one being checked: three in flight. With a verification worker a page
 * is read and hashed there while the one before is checked here, and a third on its way keeps the
 * worker fed: in a settled Chromium the first verification of 100 000 events was faster in 10 of 10
 * interleaved pairs (medians 1.79 and 1.79 s against 2.07 and 1.88 s, ADR 0387), and no slower from
 * a gateway that builds every page on request (one at a time in its build lane, ADR 0379: the third
 * waits its turn there; medians 4.0 s both).
 */
const PAGES_AHEAD = 2;
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

/**
 * The longest the checks of a page run without a pause (ms): the requests for the next pages are
 * made (and their answers taken) at each pause, and a page stays responsive meanwhile.
 */
const SLICE_MS = 12;

/** A pause that lets the event loop run what waits (a task, not a microtask): scheduler.yield where there is one. */
function yieldToEventLoop(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
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
  const newest = recorded.at(-1)?.userSeq;
  /** The seq of the newest recorded batch's last event, once its proof is seen. */
  let lastSeq: number | null = null;
  const sawNewest = (proof: UserBatchProof | undefined): void => {
    if (proof === undefined || proof === null || proof.userSeq !== newest) return;
    const seq = Array.isArray(proof.events) ? (proof.events.at(-1) as { seq?: unknown } | undefined)?.seq : undefined;
    if (typeof seq === 'number') lastSeq = seq;
  };
  let told = false;
  const fetched = (): void => {
    if (told) return;
    told = true;
    options.onFetched?.(recorded, lastSeq);
  };
  if (total === 0) fetched();
  await hasher;
  const progress: HistoryProgress = { done: 0, total, verified: 0, pending: 0, failed: 0 };
  options.onProgress?.({ ...progress });
  const verdicts: BatchVerdict[] = new Array(total);
  const links: Link[] = new Array(total);
  const indexOf = new Map(recorded.map((b, i) => [b.userSeq, i]));
  // Each proof checked as soon as it is parsed, with the leaves hashed from the bytes it came as when
  // it came in a page (page-scan.ts, ADR 0370; in the worker, ADR 0385), and then let go: only its
  // link in the chain is kept (ADR 0386).
  const check = (i: number, proof: UserBatchProof, leaves: Uint8Array | null): void => {
    if (options.signal?.aborted) throw new Error('verifyHistory aborted');
    const verdict = checkUserBatch(proof, leaves);
    verdicts[i] = verdict;
    const events: unknown[] = Array.isArray(proof?.events) ? proof.events : [];
    links[i] = {
      prevRoot: proof?.chain?.prevRoot ?? recorded[i]!.prevRoot,
      userRoot: proof?.chain?.userRoot ?? recorded[i]!.root,
      seqs: events.map((e) => (e as { seq?: number } | null)?.seq ?? NaN),
    };
    options.onBatch?.(i, verdict, proof);
    progress.done++;
    progress[verdict.status === 'verified' ? 'verified' : verdict.status === 'pending' ? 'pending' : 'failed']++;
    options.onProgress?.({ ...progress });
  };
  const concurrency = options.concurrency ?? 8;
  // Pages of proofs, planned from the recorded list by the gateway's own page rule (ADR 0250) so
  // that several are fetched at once (PAGES_AHEAD in flight while one is checked), each proof checked
  // exactly as one fetched alone. A range the gateway cuts shorter is followed by its nextCursor; a
  // proof missing from the pages (recorded meanwhile) is fetched alone below.
  const target = `/v1/users/${encodeURIComponent(party)}/user-batches/proofs`;
  const readPage = source.getUserBatchProofPage
    ? async (query: { since: number; limit: number }): Promise<ProofPage> => readProofPage(await source.getUserBatchProofPage!(party, query), target)
    : source.listUserBatchProofs
      ? async (query: { since: number; limit: number }): Promise<ProofPage> => parsedProofPage(await source.listUserBatchProofs!(party, query))
      : null;
  if (readPage !== null && total > 0) {
    const list = async (query: { since: number; limit: number }): Promise<ProofPage> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await readPage(query);
        } catch (err) {
          const wait = busyPageWait(err);
          if (wait === null || attempt >= BUSY_PAGE_RETRIES) throw err;
          await pause(wait, options.signal);
        }
      }
    };
    const ranges = pageRanges(recorded);
    /** A range's pages, and whether they reached its last batch. */
    const fetchRange = async (r: PageRange): Promise<{ pages: ProofPage[]; reached: boolean }> => {
      const pages: ProofPage[] = [];
      for (let since = r.since; ; ) {
        const page = await list({ since, limit: Math.min(PAGE_BATCHES, r.batches) });
        pages.push(page);
        const last = page.lastUserSeq;
        if (last === newest) sawNewest(page.at(page.size - 1).proof);
        // A cursor that does not move on ends the range too: what it lacks is fetched alone below.
        if (page.nextCursor === null || last === undefined || last >= r.lastUserSeq || page.nextCursor <= since) return { pages, reached: last !== undefined && last >= r.lastUserSeq };
        since = page.nextCursor;
      }
    };
    const inFlight: Array<Promise<{ pages: ProofPage[]; reached: boolean }>> = [];
    let planned = 0;
    let reached = 0;
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
        const range = await inFlight.shift()!;
        fill();
        if (range.reached) reached++;
        if (inFlight.length === 0 && reached === ranges.length) fetched();
        // A proof at a time: parsed, checked, and let go before the next is parsed.
        let slice = performance.now();
        for (const page of range.pages) {
          for (let k = 0; k < page.size; k++) {
            const { proof, leaves } = page.at(k);
            const i = indexOf.get(proof?.userSeq);
            if (i !== undefined && verdicts[i] === undefined) check(i, proof, leaves);
            if (performance.now() - slice >= SLICE_MS) {
              await yieldToEventLoop();
              slice = performance.now();
            }
          }
        }
      }
    } catch (err) {
      if (!missingRoute(err) || progress.done > 0) throw err;
    }
  }
  const rest = recorded.map((_, i) => i).filter((i) => verdicts[i] === undefined);
  let toFetch = rest.length;
  if (toFetch === 0) fetched();
  await pool(rest, concurrency, async (i) => {
    const proof = await source.getUserBatchProof(party, recorded[i]!.userSeq);
    sawNewest(proof);
    if (--toFetch === 0) fetched();
    check(i, proof, null);
  });

  const chainBreaks: ChainBreak[] = [];
  const eventBatches = new Map<number, number>();
  let events = 0;
  // The roots a next batch may chain on: the chain's record, and the root recomputed from the events
  // when it differs (that difference is already a failed batch; one incident is reported once).
  let previousRoots = [ZERO];
  for (let i = 0; i < total; i++) {
    const link = links[i]!;
    const userSeq = recorded[i]!.userSeq;
    if (userSeq !== i + 1) chainBreaks.push({ userSeq, message: `user batch ${i + 1} is missing (found ${userSeq})` });
    if (!previousRoots.includes(link.prevRoot)) chainBreaks.push({ userSeq, message: `prevRoot ${link.prevRoot} does not chain on the previous user root ${previousRoots[0]}` });
    const verdict = verdicts[i]!;
    previousRoots = [link.userRoot];
    if (verdict.status === 'failed' && verdict.step === 'userRoot' && verdict.actual) previousRoots.push(verdict.actual);
    for (const seq of link.seqs) {
      const holder = eventBatches.get(seq);
      if (holder !== undefined) chainBreaks.push({ userSeq, message: `event ${seq} is also in user batch ${holder}` });
      eventBatches.set(seq, userSeq);
      events++;
    }
  }
  const status = total === 0 ? 'empty' : progress.failed > 0 || chainBreaks.length > 0 ? 'failed' : progress.pending > 0 ? 'pending' : 'verified';
  return { party, status, batches: total, events, verified: progress.verified, pending: progress.pending, failed: progress.failed, verdicts, chainBreaks, eventBatches };
}
