// The live runtime's commitment check (docs/verification.md, "The gateway's own check"): the
// watcher, in a worker thread (CheckThread, ADR 0062), fed the events' texts; its results to the
// monitor on this thread (counter, error log, /readyz); and the start-up seed.
//
// Seed: a gateway that starts mid-history cannot recompute the batches it sees only the end of.
// Before the stream starts after `startAfter` (the mirror's newest seq), the events from the
// mirror's last manifest up to `startAfter` are read from the database and fed to the watcher
// aligned on that manifest, so the first commit after start is checked in full. Without a
// database, with more than SEED_MAX_EVENTS to read, or when the read fails, the watcher starts
// unaligned: the claims of the batches begun before it are counted `skipped`, never `mismatch`,
// and the first manifest it sees aligns it.
import type { Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { eventsAfter } from '../db/queries/events.js';
import { lastManifestSeq } from '../db/queries/commitments.js';
import type { CommittedEvent } from '../../packages/client/src/verify/scheme.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import { CheckThread } from './check-thread.js';
import { CommitmentMonitor, type CommitmentStatus } from './monitor.js';

/** Most events the start-up seed reads (a few commit periods are normally a few thousand). */
export const SEED_MAX_EVENTS = 200_000;
const PAGE = 5_000;

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export class LiveCommitments {
  private readonly monitor: CommitmentMonitor;
  private readonly thread: CheckThread;

  constructor(registry: Registry, private readonly logger: Logger, options: { maxQueuedChars?: number } = {}) {
    this.monitor = new CommitmentMonitor(registry, logger);
    this.thread = new CheckThread({ onCheck: this.monitor.record, onDropped: this.monitor.dropped, logger, ...options });
  }

  /** Each event of the stream, in seq order: handed to the worker (the live path does no hashing). */
  observe(event: EngineEvent): void {
    this.thread.event(event);
  }

  /** The engine's history was replaced. */
  reset(): void {
    this.thread.reset();
  }

  /** Resolves once the worker has checked everything handed to it (tests, the bench). */
  drained(): Promise<void> {
    return this.thread.drained();
  }

  /** Stops the worker thread. */
  close(): Promise<void> {
    return this.thread.close();
  }

  status(): CommitmentStatus {
    return this.monitor.status();
  }

  /** Feeds the mirror's events after its last manifest up to `startAfter` (see the header). Never throws. */
  async seed(db: Database, startAfter: number | null): Promise<void> {
    if (!db.configured || startAfter === null || startAfter <= 0) return;
    try {
      const from = (await db.run((sql) => lastManifestSeq(sql, startAfter))) ?? 0;
      if (startAfter - from > SEED_MAX_EVENTS) {
        this.logger.warn({ from, startAfter }, 'commitments: too many events since the last manifest to seed; batches begun before start are skipped');
        return;
      }
      const events: CommittedEvent[] = [];
      for (let after = from; after < startAfter; ) {
        const page = await db.run((sql) => eventsAfter(sql, after, Math.min(PAGE, startAfter - after)));
        if (page.length === 0) break;
        events.push(...page);
        after = page[page.length - 1]!.seq;
      }
      if (events.length !== startAfter - from || events.some((e, i) => e.seq !== from + i + 1)) {
        this.logger.warn({ from, startAfter, read: events.length }, 'commitments: the mirror has holes; batches begun before start are skipped');
        return;
      }
      await this.thread.seed(from, events);
      this.logger.info({ from, startAfter, events: events.length }, 'commitments: pending batches seeded from the database');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'commitments: seed from the database failed; batches begun before start are skipped');
    }
  }
}
