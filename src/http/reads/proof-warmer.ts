// Builds the proofs of user batches as the chain records them, ahead of any request (ADR 0382), so
// that a party's first verification finds them kept instead of waiting for every page to be built
// (about 15 µs of the gateway's CPU per event: 1.5 s for a history of 100 000 events, on top of the
// client's own hashing).
//
// Guarantees:
// - it builds exactly what the range route would (the same reads, the same bytes: proof-pages.ts),
//   in the build lane as the gateway's own flow: a client's cold page takes its fair turn beside it,
//   never behind the warmer's backlog;
// - it starts with the newest manifests holding what the cache holds (startEventsFor), then follows the chain's new
//   ones, MANIFESTS_A_STEP at a time (each step's reads, then its builds, in the lane's turns);
// - only `verified` answers are kept, under the cache's bounds (bytes, TTL): a full cache drops its
//   least recently used answers, so the warmer never holds more memory than the cache allows;
// - a failed turn (the database unreachable) is logged and tried again the next turn, from where it was.
import type { FastifyBaseLogger } from 'fastify';
import { repeatOn, type Clock, type Repeating } from '../../contracts/clock.js';
import type { Database } from '../../db/database.js';
import type { Flow } from '../../fair-share.js';
import { readProofInputs, readRecords } from '../../commitments/proof.js';
import { buildAheadStart, manifestsParties, newManifests } from '../../db/queries/commitments.js';
import type { ProofPages } from './proof-pages.js';

/** Manifests taken in one step: bounds one step's reads and builds. */
export const MANIFESTS_A_STEP = 32;
/** Bytes of kept answer per event, rounded up from the 660 measured (a history of 100 000 events: 66 MB). */
const ANSWER_BYTES_PER_EVENT = 800;

/**
 * At start, the proofs of the newest manifests holding this many events are built: as many as the
 * cache of answers holds. What was committed before a restart or a deploy is verified at once too,
 * not only what the chain records after.
 */
export function startEventsFor(cacheBytes: number): number {
  return Math.floor(cacheBytes / ANSWER_BYTES_PER_EVENT);
}
/** Manifests looked at to find where that starts (a bound on the first read). */
const START_SCAN = 20_000;

/** The gateway's own flow in the build lane (a client's pages take their turns beside it). */
const WARMER: Flow = { address: 'gateway', party: null };

export interface ProofWarmerOptions {
  db: Database;
  pages: ProofPages;
  clock: Clock;
  logger: FastifyBaseLogger;
  /** How often the chain's new manifests are looked for. */
  periodMs: number;
  /** Events of the newest manifests built at start (startEventsFor the cache's size). */
  startEvents: number;
}

export class ProofWarmer {
  /** The last manifest taken in (null: not known yet; the first turn finds where to start). */
  private after: number | null = null;
  private timer: Repeating | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** The last turn failed (logged once until one succeeds). */
  private failing = false;
  /** Proofs kept by the warmer since it started (`bff_proofs_built_ahead_total`). */
  built = 0;
  /** Turns that failed, the database unreachable (`bff_proofs_build_ahead_failures_total`). */
  failures = 0;

  constructor(private readonly options: ProofWarmerOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = repeatOn(this.options.clock, this.options.periodMs, () => void this.turn());
  }

  /** Stops the turns; resolves when the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
  }

  /** One turn: the manifests recorded since the last, their parties' proofs built and kept. Never two at once. */
  turn(): Promise<void> {
    this.running ??= this.take().finally(() => (this.running = null));
    return this.running;
  }

  private async take(): Promise<void> {
    try {
      await this.catchUp();
      if (this.failing) this.options.logger.info({ after: this.after }, 'proofs built ahead again');
      this.failing = false;
    } catch (err) {
      // Once per outage, not once a second: the database's own state is reported by /readyz.
      if (!this.failing) this.options.logger.warn({ err, after: this.after }, 'proofs not built ahead; tried again every turn');
      this.failing = true;
      this.failures++;
    }
  }

  /** Builds every manifest recorded since the last taken, MANIFESTS_A_STEP at a time. */
  private async catchUp(): Promise<void> {
    const { db, pages } = this.options;
    this.after ??= await db.read<number | null>(null, (sql) => buildAheadStart(sql, this.options.startEvents, START_SCAN));
    for (;;) {
      const after = this.after;
      if (after === null || this.stopped) return;
      const found = await db.read<number[]>([], (sql) => newManifests(sql, after, MANIFESTS_A_STEP));
      if (found.length === 0) return;
      const spans = await db.read([], (sql) => manifestsParties(sql, found));
      for (const span of spans) {
        const inputs = await db.read(null, async (sql) => {
          const records = await readRecords(sql, span.party, span.fromUserSeq - 1, span.count);
          return readProofInputs(sql, span.party, records.filter((r) => pages.kept(span.party, r) === null));
        });
        if (inputs && inputs.batches.length > 0) this.built += await pages.build(WARMER, inputs, () => undefined);
      }
      this.after = found.at(-1)!;
      if (found.length < MANIFESTS_A_STEP) return;
    }
  }
}
