// The live runtime's commitment check (docs/verification.md, "The gateway's own check"): the
// watcher fed one event at a time, its results to the monitor, and the start-up seed.
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
import { CommitmentMonitor, type CommitmentStatus } from './monitor.js';
import { CommitmentWatcher } from './watcher.js';

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
  private readonly watcher: CommitmentWatcher;

  constructor(registry: Registry, private readonly logger: Logger) {
    this.monitor = new CommitmentMonitor(registry, logger);
    this.watcher = new CommitmentWatcher(this.monitor.record);
  }

  observe(event: CommittedEvent): void {
    this.watcher.observe(event);
  }

  /** The engine's history was replaced. */
  reset(): void {
    this.watcher.reset();
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
      this.watcher.alignAfter(from);
      for (const e of events) this.watcher.observe(e);
      this.logger.info({ from, startAfter, parties: this.watcher.pendingParties }, 'commitments: pending batches seeded from the database');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'commitments: seed from the database failed; batches begun before start are skipped');
    }
  }
}
