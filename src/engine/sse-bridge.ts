// The engine's admin event stream (docs/engine.md "Event stream") as an EngineEventSource: each
// connection resumes from the last delivered seq and ends in one Outcome, which the loop handles
// in one switch. The engine may replace its history, skip seqs, forget old ones (410) or send an
// event past any bound; each is an outcome here, never a silent stall or an unbounded buffer.
// Why each rule exists: ADR 0230.
import { request } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { FastifyBaseLogger } from 'fastify';
import { parseEngineEvent, type EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink, EngineEventSource, SourceLag } from '../contracts/engine-event-source.js';
import { systemClock, type Clock } from '../contracts/clock.js';
import { traced, traceHeaders } from '../tracing/index.js';
import { within } from '../deadline.js';
import { eventFingerprint } from './fingerprint.js';
import { DEFAULT_MAX_EVENT_BYTES, readFirstEngineEvent } from './first-event.js';
import { OrderedDelivery, WakeableSleep, repeat, type SourceMetrics } from './ordered-delivery.js';

export { DEFAULT_MAX_EVENT_BYTES } from './first-event.js';

export interface SseBridgeOptions {
  /** e.g. http://127.0.0.1:8080/v1/admin/events/stream */
  url: string;
  token: string;
  idleMs: number;
  /** Where every event, skipped gap and history replacement goes (one `events` call per received chunk). */
  sink: EngineEventSink;
  /** Events with seq > after, oldest first, at most `limit` (the indexer's `events` table); null when there is no store. */
  fillFrom: ((after: number, limit: number) => Promise<EngineEvent[]>) | null;
  /** The engine's newest seq (`GET /healthz` maxSeq), null when it does not say; asked before each connection. */
  engineHead?: () => Promise<number | null>;
  logger: FastifyBaseLogger;
  metrics: SourceMetrics;
  /** While a connection delivers nothing, the engine's head is compared with the resume point this often; default HEAD_CHECK_MS. */
  headCheckMs?: number;
  /** Longest unfinished line or event the parser holds (SSE_MAX_EVENT_BYTES); default DEFAULT_MAX_EVENT_BYTES. */
  maxEventBytes?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How long an unfilled gap stays reported in /readyz. */
  gapReportMs?: number;
  random?: () => number;
  clock?: Clock;
}

/** How long the start point's event may take to read from the store (else that connection is not checked). */
const STORE_PRINT_MS = 5_000;
/** A quiet connection's engine head is checked this often (one small GET /healthz). */
export const HEAD_CHECK_MS = 2_000;
/** The engine is asked again for a skipped seq this many times before the store is used. */
const GAP_RETRIES = 2;

/** How one connection ended; `delivered`: it delivered something (the backoff starts again). */
type Outcome =
  | { kind: 'stopped' }
  | { kind: 'dropped'; delivered: boolean }
  | { kind: 'gap'; from: number; to: number; delivered: boolean }
  | { kind: 'mismatch'; seq: number; delivered: boolean }
  | { kind: 'head below'; head: number; delivered: boolean }
  /** `after`: the last seq delivered before the over-long event; null when it was the resume point's own event, being compared. */
  | { kind: 'oversized'; after: number | null; delivered: boolean }
  | { kind: 'before retention'; oldest: number | null; compared: boolean; delivered: boolean };
type Ended = Exclude<Outcome, { kind: 'stopped' }>;

/** What the next connection starts from, as the previous ones ended. */
interface ResumeState {
  /** Connections in a row that ended badly (the backoff's exponent). */
  attempt: number;
  /** Resume one event early and compare it (false for one connection: the engine no longer has it, or it is too long). */
  compare: boolean;
  /** The store's fingerprint of the resume point's event: read once, never after a replacement (the store may hold the old history). */
  storedPrint: { seq: number; print: string } | 'unread' | 'none';
  /** Connections in a row that met the same gap. */
  gapRetries: number;
  /** The previous connection ended on an over-long line before any event. */
  garbageBefore: boolean;
}

/** One connection while it is open. */
interface Connection {
  readonly abort: AbortController;
  /** The first event must be this one again (the resume point), else the history was replaced. */
  verify: { seq: number; print: string } | null;
  /** Set by a watcher that ended the connection (the head check). */
  end: Ended | null;
  delivered: boolean;
  /** No event arrived since the head check last looked. */
  quiet: boolean;
}

const OVERSIZED = Symbol('oversized');

export class SseBridge implements EngineEventSource {
  readonly kind = 'sse' as const;
  readonly ready = true;
  private readonly delivery: OrderedDelivery;
  private readonly pause: WakeableSleep;
  private readonly clock: Clock;
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;
  private open: Connection | null = null;
  private connectedNow = false;
  private resume: ResumeState = { attempt: 0, compare: true, storedPrint: 'unread', gapRetries: 0, garbageBefore: false };

  constructor(private readonly options: SseBridgeOptions) {
    this.clock = options.clock ?? systemClock;
    this.pause = new WakeableSleep(this.clock);
    this.delivery = new OrderedDelivery({ ...options, label: 'engine SSE', retention: 'engine retention', stopped: () => this.stopped });
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** The last seq delivered (or the resume point). */
  private get last(): number | null {
    return this.delivery.last;
  }

  get position(): number | null {
    return this.last;
  }

  get connected(): boolean {
    return this.connectedNow;
  }

  /** The latest gap that could not be filled, or history replacement, while it is recent. */
  get gap(): string | undefined {
    return this.delivery.gap;
  }

  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  lag(): SourceLag | undefined {
    return undefined;
  }

  /** The engine replays only from the resume point: no earlier start fills the history. */
  replayStart(): Promise<number | null> {
    return Promise.resolve(null);
  }

  firstEvent(timeoutMs: number): Promise<EngineEvent | null> {
    return readFirstEngineEvent(this.options.url, this.options.token, timeoutMs);
  }

  start(after: number | null): void {
    if (this.running) return;
    this.delivery.startAfter(after);
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.open?.abort.abort();
    this.pause.wake();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await this.checkHeadBeforeConnecting();
      if (this.stopped) break;
      const outcome = await this.connect();
      if (outcome.kind === 'stopped' || this.stopped) break;
      switch (outcome.kind) {
        case 'mismatch':
          await this.onMismatch(outcome.seq);
          break;
        case 'head below':
          if (!this.stopped && this.last !== null && outcome.head < this.last) await this.replacedBelow(outcome.head, this.last);
          break;
        case 'gap':
          await this.resolveGap(outcome);
          break;
        case 'oversized':
          // The resume point's event itself (delivered from the store): not compared next time, nothing skipped.
          if (outcome.after === null) this.resume.compare = false;
          break;
        case 'before retention':
          await this.fillBeforeRetention(outcome.oldest);
          // The engine no longer has the resume point's event: the next connection cannot compare it.
          if (outcome.compared && outcome.oldest !== null && this.last !== null && outcome.oldest > this.last) this.resume.compare = false;
          break;
        case 'dropped':
          break;
      }
      this.options.metrics.reconnects.inc();
      // Two connections in a row ended by an over-long line before any event: an engine sending
      // garbage, not one long event; passed as before, but with the backoff (ADR 0230).
      const garbage = outcome.kind === 'oversized' && !outcome.delivered;
      const again = garbage && this.resume.garbageBefore;
      this.resume.garbageBefore = garbage;
      if (outcome.kind === 'oversized' && outcome.after !== null && (await this.passOversized(outcome.after)) && !again) {
        this.resume.attempt = 0;
        continue; // moved past it: resume at once
      }
      if (outcome.delivered) this.resume.attempt = 0;
      await this.pause.sleep(this.backoff(this.resume.attempt++));
    }
  }

  private backoff(attempt: number): number {
    const base = this.options.backoffBaseMs ?? 250;
    const max = this.options.backoffMaxMs ?? 10_000;
    const cap = Math.min(max, base * 2 ** Math.min(attempt, 20));
    return Math.floor((this.options.random ?? Math.random)() * cap); // full jitter: replicas do not reconnect in step
  }

  /** The engine's head when it answers with one; an engine that does not answer is not judged. */
  private async askHead(): Promise<number | null> {
    if (!this.options.engineHead) return null;
    try {
      const head = await this.options.engineHead();
      return head !== null && Number.isSafeInteger(head) && head >= 0 ? head : null;
    } catch {
      return null; // the stream request will say what is wrong
    }
  }

  /** A head below the resume point is another history: resumed from that head, not silent until it passes the old seq. */
  private async checkHeadBeforeConnecting(): Promise<void> {
    const head = await this.askHead();
    if (this.stopped || head === null) return;
    if (this.last === null) this.options.metrics.maxSeq.set(head); // live only: the stream starts at the engine's head
    else if (head < this.last) await this.replacedBelow(head, this.last);
  }

  private replacedBelow(head: number, last: number): Promise<void> {
    return this.replaced(head, `engine head ${head} is below the resume point ${last} (engine history replaced): resumed from the engine head`);
  }

  /** The first event of a connection was not the one delivered at the resume point: another history. */
  private async onMismatch(at: number): Promise<void> {
    const head = await this.askHead();
    if (this.stopped) return;
    const from = head !== null && head >= at ? head : at;
    await this.replaced(from, `engine event ${at} differs from the one delivered (engine history replaced): resumed from the engine head ${from}`);
  }

  /** Resumes from `head` of a new engine history; nothing the bridge knew of the old one is kept. */
  private async replaced(head: number, text: string): Promise<void> {
    this.resume = { ...this.resume, storedPrint: 'none', gapRetries: 0 };
    await this.delivery.replaced(head, text);
  }

  /** The fingerprint of the event at the resume point, from the store when the bridge did not deliver it itself. */
  private async resumePrint(): Promise<string | null> {
    const last = this.last;
    if (last === null || last < 1) return null;
    const lastEvent = this.delivery.lastEvent;
    if (lastEvent?.seq === last) return eventFingerprint(lastEvent);
    if (this.resume.storedPrint === 'unread' && this.options.fillFrom) {
      this.resume.storedPrint = 'none';
      try {
        const [e] = await within(this.options.fillFrom(last - 1, 1), STORE_PRINT_MS, () => new Error('no answer'));
        if (e && e.seq === last) this.resume.storedPrint = { seq: last, print: eventFingerprint(e) };
      } catch {
        // not checked on this connection
      }
    }
    const stored = this.resume.storedPrint;
    return typeof stored === 'object' && stored.seq === this.last ? stored.print : null;
  }

  /** One connection, until it ends: how it ended. */
  private async connect(): Promise<Outcome> {
    const print = await this.resumePrint();
    if (this.stopped) return { kind: 'stopped' };
    const compare = this.resume.compare;
    this.resume.compare = true;
    const conn: Connection = { abort: new AbortController(), verify: null, end: null, delivered: false, quiet: true };
    this.open = conn;
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}`, accept: 'text/event-stream' };
    if (this.last !== null && print !== null && compare) {
      // One event early: the engine sends the resume point's event again, to be compared.
      conn.verify = { seq: this.last, print };
      headers['last-event-id'] = String(this.last - 1);
    } else if (this.last !== null) headers['last-event-id'] = String(this.last);
    let lastByteAt = this.clock.now();
    const stopSilence = repeat(this.clock, Math.max(25, Math.floor(this.options.idleMs / 4)), () => {
      if (this.clock.now() - lastByteAt < this.options.idleMs) return;
      this.options.logger.warn({ idleMs: this.options.idleMs }, 'engine SSE stream silent: reconnecting');
      conn.abort.abort();
    });
    let stopHeadWatch = (): void => {};
    try {
      // Each (re)connection is a span of its own (src/tracing/), its traceparent sent to the engine.
      const res = await traced(
        'engine stream connect',
        async (span) => {
          const answer = await request(this.options.url, { method: 'GET', headers: traceHeaders(headers), signal: conn.abort.signal, headersTimeout: this.options.idleMs, bodyTimeout: 0 });
          span.set('http.response.status_code', answer.statusCode);
          return answer;
        },
        { kind: 'client', attributes: { 'engine.stream.source': 'sse', 'engine.stream.after': this.last ?? -1 } },
      );
      if (res.statusCode === 410) {
        const body = (await res.body.json().catch(() => ({}))) as { oldestSeq?: unknown };
        const oldest = Number.isSafeInteger(body.oldestSeq) ? (body.oldestSeq as number) : null;
        this.options.logger.warn({ last: this.last, oldestSeq: oldest }, 'engine SSE: since before retention (410): filling from the database');
        return { kind: 'before retention', oldest, compared: conn.verify !== null, delivered: true };
      }
      if (res.statusCode !== 200) {
        const text = (await res.body.text().catch(() => '')).slice(0, 200);
        this.options.logger.error({ status: res.statusCode, body: text }, 'engine SSE stream refused');
        return { kind: 'dropped', delivered: false };
      }
      this.connectedNow = true;
      stopHeadWatch = this.watchHead(conn);
      this.options.logger.info({ lastEventId: this.last }, 'engine SSE stream connected');
      const received: Array<EventSourceMessage | typeof OVERSIZED> = [];
      const parser = createParser({
        maxBufferSize: this.options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
        onError: (err) => void (err.type === 'max-buffer-size-exceeded' && received.push(OVERSIZED)),
        onEvent: (m) => void received.push(m),
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        lastByteAt = this.clock.now();
        parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
        conn.end ??= this.take(received, conn);
        received.length = 0;
        if (conn.end) {
          conn.abort.abort(); // before leaving the loop: ending the body's iteration waits for the stream to close
          break;
        }
      }
    } catch (err) {
      if (!this.stopped && !conn.abort.signal.aborted) this.options.logger.warn({ err: (err as Error).message }, 'engine SSE stream failed');
    } finally {
      stopSilence();
      stopHeadWatch();
      this.connectedNow = false;
      this.open = null;
      conn.abort.abort();
    }
    if (this.stopped) return { kind: 'stopped' };
    return conn.end ? { ...conn.end, delivered: conn.delivered } : { kind: 'dropped', delivered: conn.delivered };
  }

  /**
   * Judges what one chunk brought, in order, and delivers the events that follow the resume point
   * in one `events` call; the outcome that ends the connection, if one did.
   */
  private take(received: ReadonlyArray<EventSourceMessage | typeof OVERSIZED>, conn: Connection): Ended | null {
    const accepted: EngineEvent[] = [];
    let cursor = this.last;
    let end: Ended | null = null;
    for (const m of received) {
      if (m === OVERSIZED) {
        this.options.metrics.oversized?.inc();
        this.options.logger.error({ maxEventBytes: this.options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES, lastSeq: cursor }, 'engine SSE: a line or event longer than SSE_MAX_EVENT_BYTES: connection dropped');
        end = { kind: 'oversized', after: conn.verify ? null : cursor, delivered: false };
        conn.verify = null;
        break;
      }
      conn.quiet = false;
      const event = parseEngineEvent(m.data);
      if (!event) {
        this.options.logger.warn({ id: m.id, event: m.event }, 'engine SSE: malformed event ignored');
        continue;
      }
      const verify = conn.verify;
      if (verify) {
        if (event.seq < verify.seq) continue;
        conn.verify = null;
        if (event.seq === verify.seq) {
          if (eventFingerprint(event) === verify.print) continue; // the same event: already delivered
          end = { kind: 'mismatch', seq: event.seq, delivered: false };
          break;
        }
        // The resume point's event was not sent again: nothing to compare; continue as usual.
      }
      if (cursor !== null && event.seq <= cursor) continue; // already delivered
      if (cursor !== null && event.seq > cursor + 1) {
        end = { kind: 'gap', from: cursor + 1, to: event.seq - 1, delivered: false };
        break;
      }
      accepted.push(event);
      cursor = event.seq;
    }
    if (accepted.length > 0) {
      conn.delivered = true;
      this.resume.gapRetries = 0;
      this.delivery.deliver(accepted);
    }
    return end;
  }

  /**
   * While connected, asks the engine's head every `headCheckMs` when nothing arrived since the
   * previous look; a head below the resume point (as it was when asked: events may pass while the
   * answer is on its way) ends the connection.
   */
  private watchHead(conn: Connection): () => void {
    if (!this.options.engineHead) return () => {};
    let asking = false;
    return repeat(this.clock, this.options.headCheckMs ?? HEAD_CHECK_MS, () => {
      const sawEvents = !conn.quiet;
      conn.quiet = true;
      if (sawEvents || asking || conn.abort.signal.aborted) return;
      asking = true;
      const asked = this.last;
      void this.askHead()
        .then((head) => {
          if (conn.abort.signal.aborted || this.stopped || asked === null || this.last === null) return;
          if (head === null || head >= asked) return;
          conn.end ??= { kind: 'head below', head, delivered: false };
          conn.abort.abort();
        })
        .finally(() => (asking = false));
    });
  }

  /** A skipped seq: ask the engine again (reconnect from last), then the store, then report it. */
  private async resolveGap(gap: { from: number; to: number }): Promise<void> {
    this.resume.gapRetries++;
    this.options.logger.warn({ from: gap.from, to: gap.to, retry: this.resume.gapRetries }, 'engine SSE: seq gap');
    if (this.resume.gapRetries <= GAP_RETRIES) return;
    await this.delivery.fillFromStore(gap.to);
    if (this.last === null || this.last < gap.to) this.delivery.report(this.last === null ? gap.from : this.last + 1, gap.to);
  }

  /**
   * The event after `after` was longer than the bound: from the store when it already holds it (one
   * look: what follows must not wait for the indexer), else reported and skipped. true when the
   * bridge moved past it.
   */
  private async passOversized(after: number): Promise<boolean> {
    // Live only and nothing delivered: the next connection starts at the engine's head, past it.
    if (this.last !== after) return false;
    const seq = after + 1;
    // Only an event of the history is passed: below the engine's head it is something else (a line that never ends).
    const head = await this.options.engineHead?.().catch(() => null);
    if (this.stopped || (head !== undefined && head !== null && head < seq)) return false;
    await this.delivery.fillFromStore(seq);
    if (this.stopped) return false;
    if (this.last === null || this.last < seq) this.delivery.report(seq, seq, `event ${seq} is longer than SSE_MAX_EVENT_BYTES and not in the database yet`);
    else {
      this.options.logger.warn({ seq }, 'engine SSE: an event longer than SSE_MAX_EVENT_BYTES was taken from the database');
      this.resume.compare = false; // comparing it would meet the same bound again
    }
    return true;
  }

  private async fillBeforeRetention(oldestSeq: number | null): Promise<void> {
    await this.delivery.fillFromStore(null);
    if (oldestSeq !== null && this.last !== null && this.last < oldestSeq - 1) this.delivery.report(this.last + 1, oldestSeq - 1);
    else if (oldestSeq === null && this.last !== null) this.delivery.report(this.last + 1, null);
  }
}
