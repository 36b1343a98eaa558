// The live path's side of the commitment check (ADR 0062): each event that can matter to a
// commitment is handed, as the text it arrived as, to a worker thread (check-worker.ts) that does
// the parsing and hashing. The live path only appends the text to a batch; the batch is posted at
// the end of the turn of the event loop (one SSE chunk or JetStream batch), or sooner when it
// reaches FLUSH_CHARS. Not later: the texts are slices of the chunk they arrived in, and holding
// them across turns keeps the chunks alive into the old generation, which measurably costs the live
// path more in garbage collection than a post per turn does.
//
// Falling behind: the characters posted and not yet consumed by the worker are bounded
// (`maxQueuedChars`). Beyond it the live path drops the check's events instead of waiting: it never
// blocks. Dropped events are counted; a claim among them is reported `skipped`. Once the worker has
// caught up to half the bound, it is told to forget everything (a gap) and starts again unaligned,
// like a gateway started mid-history: the claims of batches begun before the gap are `skipped`
// until the next manifest realigns it. A gap therefore never produces a false mismatch.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { CommittedEvent } from '../../packages/client/src/verify/scheme.js';
import type { FromWorker, ToWorker } from './check-protocol.js';
import type { CommitmentCheck } from './watcher.js';

/** Default bound of the worker's backlog: about 1 s of a saturated stream (≈ 100 000 events). */
export const MAX_QUEUED_CHARS = 32 * 1024 * 1024;
/** A batch this large is posted at once rather than at the end of the turn. */
const FLUSH_CHARS = 1024 * 1024;

const USER_CLAIM = 'engine.user_batch_committed';
const MANIFEST_CLAIM = 'outbound.batch_committed';

interface Logger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CheckThreadOptions {
  /** Each check the worker made, in order. */
  onCheck: (check: CommitmentCheck) => void;
  /** Events dropped because the worker was behind. */
  onDropped: (events: number) => void;
  logger: Logger;
  maxQueuedChars?: number;
  /**
   * Another worker module speaking the same protocol (bench/stream.ts measures the hand-off alone
   * with one that only acknowledges). Default: check-worker.
   */
  workerUrl?: URL;
}

/** Can the event change a commitment check? Its party's batch, a fill's legs, or a claim. */
function relevant(event: EngineEvent): boolean {
  return typeof event.party === 'string' || event.kind === 'engine.order_filled' || event.kind === MANIFEST_CLAIM;
}

export class CheckThread {
  private worker: Worker | null = null;
  private batch: string[] = [];
  private batchChars = 0;
  private flushQueued = false;
  /** Characters posted and not yet consumed by the worker. */
  private queued = 0;
  private dropping = false;
  /** The next event is the first the worker sees since it started or forgot everything. */
  private first = true;
  private closed = false;
  private readonly maxQueued: number;
  private readonly flushSoon = () => {
    this.flushQueued = false;
    this.flush();
  };

  constructor(private readonly options: CheckThreadOptions) {
    this.maxQueued = options.maxQueuedChars ?? MAX_QUEUED_CHARS;
  }

  /** Characters handed to the worker and not yet consumed (for tests and the bench). */
  get backlog(): number {
    return this.queued + this.batchChars;
  }

  /** One event of the live stream, in seq order. Never blocks, never throws. */
  event(event: EngineEvent): void {
    // The first event is always sent: the watcher learns from it whether it sees the history from seq 1.
    if (!this.first && !relevant(event)) return;
    if (this.dropping && !this.resume()) return this.drop(event);
    if (this.queued + this.batchChars > this.maxQueued) {
      this.dropping = true;
      this.options.logger.warn({ seq: event.seq, backlogChars: this.backlog }, 'commitments: the check is behind the stream; dropping its events until it catches up (claims meanwhile skipped)');
      return this.drop(event);
    }
    this.add(event.raw ?? JSON.stringify(event));
  }

  /** Events read from the mirror, before the stream starts (the seed): never dropped; waits for room instead. */
  async seed(after: number, events: readonly CommittedEvent[]): Promise<void> {
    this.flush();
    this.post({ t: 'align', after });
    this.first = false;
    for (const e of events) {
      if (this.queued + this.batchChars > this.maxQueued / 2) {
        this.flush();
        await this.drained(this.maxQueued / 4);
      }
      this.add(JSON.stringify(e));
    }
    this.flush();
  }

  /** The history was replaced: the worker forgets it (after the old events still queued). */
  reset(): void {
    this.batch = [];
    this.batchChars = 0;
    this.dropping = false;
    this.post({ t: 'reset' });
    this.first = true;
  }

  /** Posts the batch now (the end of the turn does it otherwise). */
  flush(): void {
    if (this.batch.length === 0) return;
    const message: ToWorker = { t: 'events', texts: this.batch, chars: this.batchChars };
    this.batch = [];
    this.batchChars = 0;
    this.post(message);
  }

  /** Resolves once the worker has consumed all but `chars` characters of what it was handed. */
  async drained(chars = 0): Promise<void> {
    this.flush();
    while (this.queued > chars && this.worker) await new Promise((r) => setTimeout(r, 5));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    this.batch = [];
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private add(text: string): void {
    this.first = false;
    this.batch.push(text);
    this.batchChars += text.length;
    if (this.batchChars >= FLUSH_CHARS) this.flush();
    else if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Back below half the bound: the worker forgets what it knew, and sees the stream again from here. */
  private resume(): boolean {
    if (this.queued + this.batchChars > this.maxQueued / 2) return false;
    this.dropping = false;
    this.post({ t: 'reset' });
    this.first = true;
    return true;
  }

  private drop(event: EngineEvent): void {
    this.options.onDropped(1);
    const p = event.payload;
    if (event.kind === USER_CLAIM && typeof event.party === 'string') {
      const claimed = { root: String(p.root), prevRoot: String(p.prevRoot), eventCount: Number(p.eventCount) };
      this.options.onCheck({ kind: 'user_batch', result: 'skipped', party: event.party, userSeq: Number(p.userSeq), seq: event.seq, firstSeq: null, lastSeq: null, claimed, computed: null, reasons: [] });
    } else if (event.kind === MANIFEST_CLAIM) {
      const claimed = { root: String(p.root), prevRoot: String(p.prevRoot), userBatchCount: Number(p.userBatchCount) };
      this.options.onCheck({ kind: 'manifest', result: 'skipped', batchNum: Number(p.batchNum), seq: event.seq, claimed, computed: null, reasons: [] });
    }
  }

  private post(message: ToWorker): void {
    if (this.closed) return;
    const worker = this.worker ?? this.start();
    if (message.t === 'events') this.queued += message.chars;
    worker.postMessage(message);
  }

  private start(): Worker {
    // Run from TypeScript sources (tsx, vitest), the worker loads its module through tsx too; built, it is plain JS.
    const url = this.options.workerUrl ?? new URL(import.meta.url.endsWith('.ts') ? './check-worker.ts' : './check-worker.js', import.meta.url);
    const fromSource = url.pathname.endsWith('.ts');
    const worker = new Worker(url, {
      // tsx resolved from here, not from the working directory the gateway was started in.
      execArgv: fromSource ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [],
      name: 'commitment-check',
    });
    worker.unref();
    worker.on('message', (m: FromWorker) => {
      this.queued -= m.consumed;
      for (const check of m.checks) this.options.onCheck(check);
    });
    worker.on('error', (err) => {
      this.options.logger.error({ err: err.message }, 'commitments: the check worker failed; restarting it (claims of batches begun before are skipped)');
    });
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      // A new worker starts with the next event, knowing nothing: like a gateway started mid-history.
      this.worker = null;
      this.queued = 0;
      this.first = true;
    });
    this.worker = worker;
    return worker;
  }
}
