// What the gateway does with each commitment check (docs/verification.md): counts it
// (bff_commitments_total{kind, result}), logs a mismatch as an error with the party and the seqs,
// and keeps the mismatches for /readyz, which names them without turning the gateway unready (the
// gateway still serves correctly; the engine's claim is what is wrong).
import { Counter, type Registry } from 'prom-client';
import type { CommitmentCheck } from './watcher.js';
import type { CommitmentIncident, CommitmentStatus } from '../contracts/commitment-status.js';

interface Logger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export type { CommitmentIncident, CommitmentStatus } from '../contracts/commitment-status.js';

const RECENT = 10;

export class CommitmentMonitor {
  private readonly counter: Counter<'kind' | 'result'>;
  private readonly droppedEvents: Counter;
  private readonly totals = { match: 0, mismatch: 0, skipped: 0 };
  private readonly recent: CommitmentIncident[] = [];

  constructor(registry: Registry, private readonly logger: Logger) {
    const existing = registry.getSingleMetric('bff_commitments_total') as Counter<'kind' | 'result'> | undefined;
    this.counter =
      existing ??
      new Counter({
        name: 'bff_commitments_total',
        help: 'Engine commitments the gateway recomputed from the streamed events: match, mismatch (an incident), skipped (batch begun before this process saw the stream)',
        labelNames: ['kind', 'result'],
        registers: [registry],
      });
    for (const kind of ['user_batch', 'manifest']) for (const result of ['match', 'mismatch', 'skipped']) this.counter.inc({ kind, result }, 0);
    this.droppedEvents =
      (registry.getSingleMetric('bff_commitments_dropped_events_total') as Counter | undefined) ??
      new Counter({
        name: 'bff_commitments_dropped_events_total',
        help: 'Events the commitment check dropped because its worker thread was behind the stream (the claims of the batches they were in are counted skipped)',
        registers: [registry],
      });
  }

  readonly dropped = (events: number): void => {
    this.droppedEvents.inc(events);
  };

  readonly record = (check: CommitmentCheck): void => {
    this.counter.inc({ kind: check.kind, result: check.result });
    this.totals[check.result]++;
    if (check.result !== 'mismatch') return;
    const incident: CommitmentIncident =
      check.kind === 'user_batch'
        ? {
            kind: 'user_batch',
            seq: check.seq,
            party: check.party,
            userSeq: check.userSeq,
            firstSeq: check.firstSeq,
            lastSeq: check.lastSeq,
            claimedRoot: check.claimed.root,
            computedRoot: check.computed?.root ?? null,
            reasons: check.reasons,
          }
        : { kind: 'manifest', seq: check.seq, batchNum: check.batchNum, claimedRoot: check.claimed.root, computedRoot: check.computed?.root ?? null, reasons: check.reasons };
    this.recent.push(incident);
    if (this.recent.length > RECENT) this.recent.shift();
    this.logger.error(
      { incident: 'commitment_mismatch', ...incident, claimed: check.claimed, computed: check.computed },
      check.kind === 'user_batch'
        ? `commitment mismatch: the engine's user batch ${check.userSeq} of ${check.party} (claim seq ${check.seq}, events ${check.firstSeq ?? '-'}..${check.lastSeq ?? '-'}) differs from the streamed events (${check.reasons.join(', ')})`
        : `commitment mismatch: the engine's manifest ${check.batchNum} (claim seq ${check.seq}) differs from the user batches streamed (${check.reasons.join(', ')})`,
    );
  };

  status(): CommitmentStatus {
    return { ...this.totals, incidents: [...this.recent] };
  }
}
