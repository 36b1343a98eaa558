// What every engine event source shares (the SSE bridge, and a fleet replica's JetStream source):
// the ordering half of the EngineEventSink guarantees (src/contracts/engine-event-source.ts).
// Each seq reaches the sink at most once and in increasing order, a hole is filled from the
// indexer's `events` table or reported (`gap` in /readyz for a while) and skipped, a replaced
// history is handed to the sink, and the delivery metrics are kept. The sources differ only in
// how events arrive and how a connection resumes.
import type { FastifyBaseLogger } from 'fastify';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink } from '../contracts/engine-event-source.js';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';

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
  stopped: () => boolean;
  /** Not ready until told the head to catch up with (`catchUpTo`): a replica filling its history from its stream. */
  catchesUp?: boolean;
  clock?: Clock;
}

const FILL_PAGE = 1000;

export class OrderedDelivery {
  /** The last seq delivered, else the resume point; null: live only, nothing delivered yet. */
  last: number | null = null;
  /** The last delivered event. */
  lastEvent: EngineEvent | null = null;
  private gapReport: { text: string; at: number } | null = null;
  private readonly clock: Clock;
  /** Where delivery stands against the head the transport had at start (EngineEventSource `ready`). */
  private catchUp: { kind: 'head unknown' } | { kind: 'until'; head: number } | { kind: 'live' };
  private readonly live: Promise<void>;
  private goLive: () => void = () => {};

  constructor(private readonly options: OrderedDeliveryOptions) {
    this.clock = options.clock ?? systemClock;
    this.catchUp = options.catchesUp ? { kind: 'head unknown' } : { kind: 'live' };
    this.live = options.catchesUp ? new Promise<void>((resolve) => (this.goLive = resolve)) : Promise.resolve();
  }

  /** Sets the resume point (nothing at or below it is delivered). */
  startAfter(seq: number | null): void {
    this.last = seq;
    if (seq !== null) this.options.metrics.maxSeq.set(seq);
    this.settle();
  }

  /** Delivering live events: caught up with the head the transport had at start (or told to stop waiting). */
  get ready(): boolean {
    return this.catchUp.kind === 'live';
  }

  /** Behind the head the transport had at start (false while that head is not known). */
  get catchingUp(): boolean {
    return this.catchUp.kind === 'until';
  }

  whenReady(): Promise<void> {
    return this.live;
  }

  /** The head to catch up with, once (null: the transport held nothing, so everything is live). */
  catchUpTo(head: number | null): void {
    if (this.catchUp.kind !== 'head unknown') return;
    if (head === null) this.markLive();
    else {
      this.catchUp = { kind: 'until', head };
      this.settle();
    }
  }

  /** Ready from now on, whatever was delivered (the source stops: nothing more will come). */
  markLive(): void {
    this.catchUp = { kind: 'live' };
    this.goLive();
  }

  private settle(): void {
    if (this.catchUp.kind === 'until' && this.last !== null && this.last >= this.catchUp.head) this.markLive();
  }

  /** The latest discontinuity worth reporting, while it is recent. */
  get gap(): string | undefined {
    const g = this.gapReport;
    if (!g) return undefined;
    if (this.clock.now() - g.at > (this.options.gapReportMs ?? 300_000)) {
      this.gapReport = null;
      return undefined;
    }
    return g.text;
  }

  announce(text: string): void {
    this.gapReport = { text, at: this.clock.now() };
  }

  /**
   * Delivers events received together (contiguous, after `last`) in one sink call; split at the
   * head to catch up with, so that `ready` turns before the first live event is delivered.
   */
  deliver(events: readonly EngineEvent[]): void {
    if (events.length === 0) return;
    if (this.catchUp.kind === 'until') {
      const head = this.catchUp.head;
      const firstLive = events.findIndex((e) => e.seq > head);
      if (firstLive > 0) this.deliverNow(events.slice(0, firstLive));
      if (firstLive >= 0) this.markLive();
      this.deliverNow(firstLive > 0 ? events.slice(firstLive) : events);
      return;
    }
    this.deliverNow(events);
  }

  private deliverNow(events: readonly EngineEvent[]): void {
    const { metrics } = this.options;
    const now = this.clock.now();
    for (const event of events) {
      metrics.events.inc();
      const ts = Date.parse(event.ts);
      if (Number.isFinite(ts)) metrics.lagSeconds.set((now - ts) / 1000);
    }
    const newest = events[events.length - 1]!;
    this.last = newest.seq;
    this.lastEvent = newest;
    metrics.maxSeq.set(newest.seq);
    try {
      this.options.sink.events(events);
    } catch (err) {
      // A projection bug must not stop the stream or make it repeat the events.
      this.options.logger.error({ err, from: events[0]!.seq, to: newest.seq }, 'stream projection failed');
    }
    this.settle();
  }

  /** Reads events after `last` from the store, delivering them in order (a page at a time), up to `until` (inclusive) if given. */
  async fillFromStore(until: number | null): Promise<void> {
    const fill = this.options.fillFrom;
    if (!fill || this.last === null) return;
    try {
      for (;;) {
        if (this.options.stopped()) return;
        const page = await fill(this.last, FILL_PAGE);
        // Past the gap, or the store has a hole too: stop at it.
        let n = 0;
        while (n < page.length && (until === null || page[n]!.seq <= until) && page[n]!.seq === this.last + 1 + n) n++;
        this.deliver(n === page.length ? page : page.slice(0, n));
        if (n < page.length || n === 0 || page.length < FILL_PAGE) return;
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
      this.settle();
    }
  }

  /**
   * The engine's history was replaced (each source tells it its own way): reported, handed to the
   * sink (awaited: the runtime resets before anything of the new history is delivered), then
   * `head` of the new history becomes the resume point (the position is the old one until then).
   */
  async replaced(head: number, text: string): Promise<void> {
    this.announce(text);
    this.options.logger.error({ head, resumePoint: this.last }, `${this.options.label}: ${text}; frames before the new head were not streamed, backfill from /v1/events`);
    this.lastEvent = null;
    try {
      await this.options.sink.replaced(head);
    } catch (err) {
      this.options.logger.error({ err }, `${this.options.label}: the runtime failed to reset after a history replacement`);
    }
    this.startAfter(head);
  }
}

/**
 * A backoff sleep that `wake()` ends early (a source being stopped must not wait it out). Several
 * loops of one owner may sleep at once (the relay's publisher and its restart loop): `wake()` ends
 * every sleep pending at that moment.
 */
export class WakeableSleep {
  private readonly pending = new Set<{ timer: ClockTimer; resolve: () => void }>();

  constructor(private readonly clock: Clock = systemClock) {}

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: this.clock.setTimeout(() => {
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
      this.clock.clearTimeout(entry.timer);
      entry.resolve();
    }
    this.pending.clear();
  }
}

/** Runs `fn` every `ms` on `clock` until the returned function is called (`unref`: the timer does not hold the process). */
export function repeat(clock: Clock, ms: number, fn: () => void, options: { unref?: boolean } = {}): () => void {
  let timer: ClockTimer | null = null;
  const arm = (): void => {
    timer = clock.setTimeout(tick, ms);
    if (options.unref) timer.unref();
  };
  const tick = (): void => {
    arm();
    fn();
  };
  arm();
  return () => {
    if (timer) clock.clearTimeout(timer);
    timer = null;
  };
}
