// What every engine event source shares (the SSE bridge, and a fleet replica's JetStream source):
// the ordering half of the EngineEventSink guarantees (src/contracts/engine-event-source.ts).
// Each seq reaches the sink at most once and in increasing order, a hole is filled from the
// indexer's `events` table or reported (`gap` in /readyz for a while) and skipped, and the delivery
// metrics are kept. The sources differ only in how events arrive and how a connection resumes.
import type { FastifyBaseLogger } from 'fastify';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink } from '../contracts/engine-event-source.js';

/** What a source counts (the stream metrics in the gateway; nothing in the relay). */
export interface SourceMetrics {
  reconnects: { inc(): void };
  lagSeconds: { set(v: number): void };
  maxSeq: { set(v: number): void };
  events: { inc(): void };
  /** Connections dropped for a line or event longer than the parser's bound. */
  oversized?: { inc(): void };
}

export interface OrderedDeliveryOptions {
  startAfter: number | null;
  sink: EngineEventSink;
  /** Events after a seq from the database (null without one). */
  fillFrom: ((after: number, limit: number) => Promise<EngineEvent[]>) | null;
  logger: FastifyBaseLogger;
  metrics: SourceMetrics;
  /** How long a gap stays reported in /readyz (default 5 min). */
  gapReportMs?: number;
  /** Log prefix and what holds the events besides the database, for messages: 'engine SSE', 'engine retention'. */
  label: string;
  retention: string;
  /** Told after each delivered event. */
  delivered?: (event: EngineEvent) => void;
  stopped: () => boolean;
}

const FILL_PAGE = 1000;

export class OrderedDelivery {
  last: number | null;
  /** The last delivered event. */
  lastEvent: EngineEvent | null = null;
  private gapReport: { text: string; at: number } | null = null;

  constructor(private readonly options: OrderedDeliveryOptions) {
    this.last = null;
    this.startAfter(options.startAfter);
  }

  /** Sets the resume point (nothing at or below it is delivered). */
  startAfter(seq: number | null): void {
    this.last = seq;
    if (seq !== null) this.options.metrics.maxSeq.set(seq);
  }

  /** The latest discontinuity worth reporting, while it is recent. */
  get gap(): string | undefined {
    const g = this.gapReport;
    if (!g) return undefined;
    if (Date.now() - g.at > (this.options.gapReportMs ?? 300_000)) {
      this.gapReport = null;
      return undefined;
    }
    return g.text;
  }

  announce(text: string): void {
    this.gapReport = { text, at: Date.now() };
  }

  deliver(event: EngineEvent): void {
    this.last = event.seq;
    this.lastEvent = event;
    this.options.delivered?.(event);
    this.options.metrics.maxSeq.set(event.seq);
    this.options.metrics.events.inc();
    const ts = Date.parse(event.ts);
    if (Number.isFinite(ts)) this.options.metrics.lagSeconds.set((Date.now() - ts) / 1000);
    try {
      this.options.sink.event(event);
    } catch (err) {
      // A projection bug must not stop the stream or make it repeat the event.
      this.options.logger.error({ err, seq: event.seq, kind: event.kind }, 'stream projection failed');
    }
  }

  /** Delivers one event the way a received chunk is delivered (inside `batch`). */
  deliverBatched(event: EngineEvent): void {
    this.options.sink.batch(() => this.deliver(event));
  }

  /** Reads events after `last` from the store, delivering them in order, up to `until` (inclusive) if given. */
  async fillFromStore(until: number | null): Promise<void> {
    const fill = this.options.fillFrom;
    if (!fill || this.last === null) return;
    try {
      for (;;) {
        if (this.options.stopped()) return;
        const page = await fill(this.last, FILL_PAGE);
        let progressed = false;
        let stop = false;
        // A page is delivered like one received chunk: its frames leave for each client in one write.
        const deliverPage = (): void => {
          for (const e of page) {
            if ((until !== null && e.seq > until) || e.seq !== this.last! + 1) {
              stop = true; // past the gap, or the store has a hole too: stop at it
              return;
            }
            this.deliver(e);
            progressed = true;
          }
        };
        this.options.sink.batch(deliverPage);
        if (stop || !progressed || page.length < FILL_PAGE) return;
      }
    } catch (err) {
      this.options.logger.error({ err: (err as Error).message }, `${this.options.label}: could not read missing events from the database`);
    }
  }

  /**
   * Records an unfillable gap and moves past it (`to` null: an open end, nothing to move past).
   * `why` replaces the usual reason and keeps it out of `gap` (/readyz): a skip that is the
   * stream's normal answer to an event it refuses (one longer than SSE_MAX_EVENT_BYTES) must not
   * take the gateway out of rotation, or one signed order would take every replica out.
   */
  report(from: number, to: number | null, why?: string): void {
    const text = why ?? (to === null ? `events after ${from - 1} unavailable` : `events ${from}..${to} unavailable (${this.options.retention} and database)`);
    if (why === undefined) this.announce(text);
    this.options.logger.error({ from, to }, `${this.options.label}: ${text}; clients should backfill from /v1/events`);
    if (to !== null) {
      this.last = to;
      this.options.sink.skipped(to, from);
    }
  }
}

/**
 * A backoff sleep that `wake()` ends early (a source being stopped must not wait it out). Several
 * loops of one owner may sleep at once (the relay's publisher and its restart loop): `wake()` ends
 * every sleep pending at that moment.
 */
export class WakeableSleep {
  private readonly pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.pending.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.pending.add(entry);
    });
  }

  wake(): void {
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.resolve();
    }
    this.pending.clear();
  }
}
