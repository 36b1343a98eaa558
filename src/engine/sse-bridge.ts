// The one connection to the engine's admin event stream (docs/engine.md "Event stream"): an
// EngineEventSource (src/contracts/engine-event-source.ts, whose guarantees it keeps toward its
// sink).
//
// After any drop the bridge
// reconnects with `Last-Event-ID: <last seq>` (exponential backoff with full jitter), so the engine
// replays what was missed. A silence watchdog aborts a connection that sent no byte (event or
// `: hb` comment) for `idleMs`. A gap in the stream (seq > last + 1) is first asked again from the
// engine (reconnect from last); if the engine skips it again, or answers 410 "since before
// retention", the missing events are read from the indexer's `events` table through `fillFrom`.
// What neither can supply is reported (logs, `gap` in /readyz) and skipped. That ordered delivery,
// the backfill and the gap report are OrderedDelivery's, shared with the JetStream source.
//
// Start point: `startAfter` (the runtime passes the database's newest seq so that nothing between
// the mirror and the live stream is lost); null = live only, from the engine's head. The
// `bff_engine_max_seq` gauge is set to the start point at once (and, when live only, to the engine's
// head at connect), so it agrees with /readyz before the first event.
//
// Engine history replaced: before each connection the engine's head (`GET /healthz` maxSeq) is
// compared with the resume point. A head BELOW it means the engine restarted with a new history:
// resuming from the old point would drop every new event up to it (seq ≤ last) and the stream would
// stay silent. The bridge resumes from the engine's new head instead, tells the sink (`replaced`:
// the replay history is cleared) and reports the discontinuity (logs, `gap` in /readyz).
//
// A replaced history whose head has already passed the resume point is caught too: every
// connection resumes one event early (`Last-Event-ID: <last - 1>`) and the first event received,
// seq `last` again, is compared with the one already delivered (seq, kind, ts, payload
// fingerprint). A different event means another history: handled as above, from the engine's head.
// The sink's `replaced` is awaited before anything of the new history is delivered.
//
// The check before a connection says nothing when the engine does not answer it yet (a restarted
// engine still starting: its stream may answer a moment later). Connected past the new engine's
// head, the stream then stays silent but for heartbeats until the new history passes the old seq,
// which may take minutes. So while a connection delivers nothing, the engine's head is asked again
// every `headCheckMs`: a head below the resume point ends the connection and is handled as above.
//
// Bounded: the parser holds at most `maxEventBytes` characters of an unfinished line or event. An
// engine that sends more (a line that never ends: bytes keep arriving, so the silence watchdog
// never fires) has its connection dropped, counted (`bff_sse_oversized_total`) and logged; memory
// stays bounded whatever it sends. The engine would send the same event again on every connection
// (it copies an order's body, unknown fields included, into `inbound.order`: one signed order can
// make an event of any size), so resuming from the same seq would loop for good. The event after
// the last delivered one (when the engine's head says it exists) is passed instead: taken from the indexer's `events` table when it already
// holds it (one look: what follows must not wait for the indexer), else reported as a gap
// (`skipped`: control connections are told `stream.gap` and fill it from REST; not a readiness
// problem) and the bridge resumes after it at once, without a backoff. An oversized event met while the resume point's event is being compared (the
// resume point was itself taken from the store) only ends that comparison. A connection ended so
// before any event, right after another one was, is an engine sending garbage (a line that never
// ends) rather than one long event: the next event is still passed, but the bridge reconnects with
// its backoff, not as fast as the engine can fill the bound (docs/reliability.md).
import { request } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { FastifyBaseLogger } from 'fastify';
import { parseEngineEvent, type EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink, EngineEventSource } from '../contracts/engine-event-source.js';
import { traced, traceHeaders } from '../tracing/index.js';
import { within } from '../deadline.js';
import { eventFingerprint } from './fingerprint.js';
import { OrderedDelivery, WakeableSleep, type SourceMetrics } from './ordered-delivery.js';

export interface SseBridgeOptions {
  /** e.g. http://127.0.0.1:8080/v1/admin/events/stream */
  url: string;
  token: string;
  idleMs: number;
  startAfter: number | null;
  /** Where every event, skipped gap and history replacement goes (one `batch` per received chunk). */
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
}

/** How long the start point's event may take to read from the store (else that connection is not checked). */
const STORE_PRINT_MS = 5_000;
/** An engine event is a few hundred bytes; this leaves room for any real one (SSE_MAX_EVENT_BYTES). */
export const DEFAULT_MAX_EVENT_BYTES = 1_048_576;
/** A quiet connection's engine head is checked this often (one small GET /healthz). */
export const HEAD_CHECK_MS = 2_000;
/** The engine is asked again for a skipped seq this many times before the store is used. */
const GAP_RETRIES = 2;

export class SseBridge implements EngineEventSource {
  private readonly delivery: OrderedDelivery;
  private readonly pause = new WakeableSleep();
  private stopped = false;
  private abort: AbortController | null = null;
  private running: Promise<void> | null = null;
  private attempt = 0;
  private connectedNow = false;
  private pendingGap: { from: number; to: number } | null = null;
  private gapRetries = 0;
  /** Fingerprint of the resume point's event when read from the store. */
  private storedPrint: { seq: number; print: string } | null = null;
  /** The start point's fingerprint is read from the store once (never after a replacement: the store may hold the old history). */
  private printFromStore = true;
  /** This connection's first event must be this one again (the resume point), else the history was replaced. */
  private verify: { seq: number; print: string } | null = null;
  private mismatch: { seq: number } | null = null;
  /** The engine no longer holds the event before the resume point (410 one early): the next connection resumes without the check. */
  private skipVerify = false;
  /** The last delivered seq when the engine sent an event longer than the bound: the next one is passed (store or gap). */
  private oversizedAfter: number | null = null;
  /** The engine head, below the resume point, that a quiet connection's check read: another history. */
  private headBelow: number | null = null;
  /** This connection was ended by an over-long line. */
  private endedOversized = false;
  /** The previous connection was ended by an over-long line before delivering any event. */
  private oversizedBefore = false;

  constructor(private readonly options: SseBridgeOptions) {
    this.delivery = new OrderedDelivery({
      ...options,
      label: 'engine SSE',
      retention: 'engine retention',
      delivered: () => (this.gapRetries = 0),
      stopped: () => this.stopped,
    });
  }

  /** The last seq delivered (or the resume point). */
  private get last(): number | null {
    return this.delivery.last;
  }

  private set last(seq: number | null) {
    this.delivery.last = seq;
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

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.pause.wake();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const healthy = await this.connectOnce();
      if (this.stopped) break;
      if (this.mismatch) await this.onMismatch();
      if (this.headBelow !== null) await this.onHeadBelow();
      if (this.pendingGap) await this.resolveGap();
      this.options.metrics.reconnects.inc();
      // A second connection in a row ended by an over-long line before any event is no event of the
      // history but an engine sending garbage (a line that never ends): it is passed as before, but
      // with the backoff, or the bridge would reconnect and read SSE_MAX_EVENT_BYTES as fast as the
      // engine sends it (a soak's endless line made 145 connections and 145 MiB in 5 s, and the
      // gateway's memory kept the high-water mark).
      const garbage = this.endedOversized && !healthy;
      const again = garbage && this.oversizedBefore;
      this.oversizedBefore = garbage;
      if (this.oversizedAfter !== null && (await this.passOversized()) && !again) {
        this.attempt = 0;
        continue; // moved past it: resume at once
      }
      if (healthy) this.attempt = 0;
      await this.pause.sleep(this.backoff(this.attempt++));
    }
  }

  private backoff(attempt: number): number {
    const base = this.options.backoffBaseMs ?? 250;
    const max = this.options.backoffMaxMs ?? 10_000;
    const cap = Math.min(max, base * 2 ** Math.min(attempt, 20));
    return Math.floor((this.options.random ?? Math.random)() * cap); // full jitter: replicas do not reconnect in step
  }

  /**
   * Compares the engine's head with the resume point. Below it, the engine's history was replaced:
   * resume from the new head (a live gateway must not go silent until the new history passes the
   * old seq) and report the discontinuity. An engine that does not answer is not judged here.
   */
  private async checkEngineHead(): Promise<void> {
    if (!this.options.engineHead) return;
    let head: number | null;
    try {
      head = await this.options.engineHead();
    } catch {
      return; // the stream request will say what is wrong
    }
    if (this.stopped || head === null || !Number.isSafeInteger(head) || head < 0) return;
    if (this.last === null) {
      this.options.metrics.maxSeq.set(head); // live only: the stream starts at the engine's head
      return;
    }
    if (head >= this.last) return;
    await this.replacedBelow(head, this.last);
  }

  private replacedBelow(head: number, last: number): Promise<void> {
    return this.replaced(head, `engine head ${head} is below the resume point ${last} (engine history replaced): resumed from the engine head`);
  }

  /** A connected stream's engine head fell below the resume point: another history, resumed from that head. */
  private async onHeadBelow(): Promise<void> {
    const head = this.headBelow!;
    this.headBelow = null;
    if (this.stopped || this.last === null || head >= this.last) return;
    await this.replacedBelow(head, this.last);
  }

  /**
   * While connected, asks the engine's head every `headCheckMs` when nothing was delivered since the
   * previous look; a head below the resume point ends the connection (see onHeadBelow).
   */
  private watchHead(ac: AbortController, deliveredSince: () => boolean): () => void {
    const ask = this.options.engineHead;
    if (!ask) return () => {};
    let asking = false;
    const timer = setInterval(() => {
      if (deliveredSince() || asking || ac.signal.aborted) return;
      asking = true;
      // Judged against the resume point of when the head was asked: events delivered while the
      // answer was on its way (a slow link) are past that head without any new history.
      const asked = this.last;
      ask()
        .then((head) => {
          if (ac.signal.aborted || this.stopped || asked === null || this.last === null) return;
          if (head === null || !Number.isSafeInteger(head) || head < 0 || head >= asked) return;
          this.headBelow = head;
          ac.abort();
        })
        .catch(() => {}) // not answering says nothing about its history
        .finally(() => (asking = false));
    }, this.options.headCheckMs ?? HEAD_CHECK_MS);
    return () => clearInterval(timer);
  }

  /** The first event of a connection was not the one delivered at the resume point: another history. */
  private async onMismatch(): Promise<void> {
    const at = this.mismatch!.seq;
    this.mismatch = null;
    let head: number | null;
    try {
      head = (await this.options.engineHead?.()) ?? null;
    } catch {
      head = null;
    }
    if (this.stopped) return;
    const from = head !== null && Number.isSafeInteger(head) && head >= at ? head : at;
    await this.replaced(from, `engine event ${at} differs from the one delivered (engine history replaced): resumed from the engine head ${from}`);
  }

  /** Resumes from `head` of a new engine history; the runtime resets before anything of it is delivered. */
  private async replaced(head: number, text: string): Promise<void> {
    const resumePoint = this.last;
    this.delivery.announce(text);
    this.options.logger.error({ engineHead: head, resumePoint }, `engine SSE: ${text}; frames before the new head were not streamed, backfill from /v1/events`);
    this.delivery.lastEvent = null;
    this.storedPrint = null;
    this.printFromStore = false;
    this.verify = null;
    this.pendingGap = null;
    this.gapRetries = 0;
    try {
      await this.options.sink.replaced(head);
    } catch (err) {
      this.options.logger.error({ err }, 'engine SSE: the runtime failed to reset after a history replacement');
    }
    // The new head becomes the resume point once the runtime has reset (its head is the old one until then).
    this.delivery.startAfter(head);
  }

  /** The fingerprint of the event at the resume point, from the store when the bridge did not deliver it itself. */
  private async resumePrint(): Promise<string | null> {
    const last = this.last;
    if (last === null || last < 1) return null;
    const lastEvent = this.delivery.lastEvent;
    if (lastEvent?.seq === last) return eventFingerprint(lastEvent);
    if (this.storedPrint?.seq === last) return this.storedPrint.print;
    if (this.printFromStore && this.options.fillFrom) {
      this.printFromStore = false;
      try {
        const [e] = await within(this.options.fillFrom(last - 1, 1), STORE_PRINT_MS, () => new Error('no answer'));
        if (e && e.seq === last) this.storedPrint = { seq: last, print: eventFingerprint(e) };
      } catch {
        // not checked on this connection
      }
    }
    return this.storedPrint?.seq === this.last ? this.storedPrint.print : null;
  }

  /** One connection, until it ends. true when it delivered something (the backoff restarts). */
  private async connectOnce(): Promise<boolean> {
    this.endedOversized = false;
    await this.checkEngineHead();
    if (this.stopped) return false;
    const print = await this.resumePrint();
    if (this.stopped) return false;
    const ac = new AbortController();
    this.abort = ac;
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}`, accept: 'text/event-stream' };
    this.verify = null;
    const check = !this.skipVerify;
    this.skipVerify = false;
    if (this.last !== null && print !== null && check) {
      // One event early: the engine sends the resume point's event again, to be compared.
      this.verify = { seq: this.last, print };
      headers['last-event-id'] = String(this.last - 1);
    } else if (this.last !== null) headers['last-event-id'] = String(this.last);
    let lastByteAt = Date.now();
    const watchdog = setInterval(
      () => {
        if (Date.now() - lastByteAt >= this.options.idleMs) {
          this.options.logger.warn({ idleMs: this.options.idleMs }, 'engine SSE stream silent: reconnecting');
          ac.abort();
        }
      },
      Math.max(25, Math.floor(this.options.idleMs / 4)),
    );
    let delivered = false;
    let stopHeadWatch = (): void => {};
    try {
      // Each (re)connection is a span of its own (src/tracing/), its traceparent sent to the engine.
      const res = await traced(
        'engine stream connect',
        async (span) => {
          const answer = await request(this.options.url, { method: 'GET', headers: traceHeaders(headers), signal: ac.signal, headersTimeout: this.options.idleMs, bodyTimeout: 0 });
          span.set('http.response.status_code', answer.statusCode);
          return answer;
        },
        { kind: 'client', attributes: { 'engine.stream.source': 'sse', 'engine.stream.after': this.last ?? -1 } },
      );
      if (res.statusCode === 410) {
        const body = (await res.body.json().catch(() => ({}))) as { oldestSeq?: unknown };
        const oldest = Number.isSafeInteger(body.oldestSeq) ? (body.oldestSeq as number) : null;
        this.options.logger.warn({ last: this.last, oldestSeq: oldest }, 'engine SSE: since before retention (410): filling from the database');
        const verified = this.verify !== null;
        this.verify = null;
        await this.fillBeforeRetention(oldest);
        // The engine no longer has the resume point's event: the next connection cannot compare it.
        if (verified && oldest !== null && this.last !== null && oldest > this.last) this.skipVerify = true;
        return true;
      }
      if (res.statusCode !== 200) {
        const text = (await res.body.text().catch(() => '')).slice(0, 200);
        this.options.logger.error({ status: res.statusCode, body: text }, 'engine SSE stream refused');
        return false;
      }
      this.connectedNow = true;
      let quiet = true;
      stopHeadWatch = this.watchHead(ac, () => {
        const sawEvents = !quiet;
        quiet = true;
        return sawEvents;
      });
      this.options.logger.info({ lastEventId: this.last }, 'engine SSE stream connected');
      const maxEventBytes = this.options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
      let oversized = false;
      const parser = createParser({
        maxBufferSize: maxEventBytes,
        onError: (err) => {
          if (err.type !== 'max-buffer-size-exceeded') return;
          oversized = true;
          this.endedOversized = true;
          this.options.metrics.oversized?.inc();
          if (this.verify) {
            // The resume point's event itself (delivered from the store): not compared, nothing skipped.
            this.verify = null;
            this.skipVerify = true;
          } else this.oversizedAfter = this.last;
          this.options.logger.error({ maxEventBytes, lastSeq: this.last }, 'engine SSE: a line or event longer than SSE_MAX_EVENT_BYTES: connection dropped');
          ac.abort();
        },
        onEvent: (m) => {
          if (this.pendingGap || this.mismatch) return; // the rest of this connection is abandoned
          quiet = false;
          if (this.accept(m)) delivered = true;
          if (this.pendingGap || this.mismatch) ac.abort();
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        lastByteAt = Date.now();
        const text = decoder.decode(chunk as Buffer, { stream: true });
        this.options.sink.batch(() => parser.feed(text));
        if (oversized || this.pendingGap || this.mismatch) break;
      }
    } catch (err) {
      if (!this.stopped && !ac.signal.aborted) this.options.logger.warn({ err: (err as Error).message }, 'engine SSE stream failed');
    } finally {
      clearInterval(watchdog);
      stopHeadWatch();
      this.connectedNow = false;
      this.abort = null;
      ac.abort();
    }
    return delivered;
  }

  /** Applies one SSE message; true when it was delivered. */
  private accept(m: EventSourceMessage): boolean {
    const event = parseEngineEvent(m.data);
    if (!event) {
      this.options.logger.warn({ id: m.id, event: m.event }, 'engine SSE: malformed event ignored');
      return false;
    }
    const verify = this.verify;
    if (verify) {
      if (event.seq < verify.seq) return false;
      this.verify = null;
      if (event.seq === verify.seq) {
        if (eventFingerprint(event) !== verify.print) this.mismatch = { seq: event.seq };
        return false; // the same event: already delivered
      }
      // The resume point's event was not sent again: nothing to compare; continue as usual.
    }
    const last = this.last;
    if (last !== null && event.seq <= last) return false; // already delivered
    if (last !== null && event.seq > last + 1) {
      this.pendingGap = { from: last + 1, to: event.seq - 1 };
      return false;
    }
    this.delivery.deliver(event);
    return true;
  }

  /** A skipped seq: ask the engine again (reconnect from last), then the store, then report it. */
  private async resolveGap(): Promise<void> {
    const gap = this.pendingGap!;
    this.pendingGap = null;
    this.gapRetries++;
    this.options.logger.warn({ ...gap, retry: this.gapRetries }, 'engine SSE: seq gap');
    if (this.gapRetries <= GAP_RETRIES) return;
    await this.delivery.fillFromStore(gap.to);
    if (this.last === null || this.last < gap.to) this.delivery.report(this.last === null ? gap.from : this.last + 1, gap.to);
  }

  /**
   * The event after `oversizedAfter` was longer than the bound: from the store if it holds it
   * (when it already holds it), else reported and skipped. true when the bridge moved past it.
   */
  private async passOversized(): Promise<boolean> {
    const after = this.oversizedAfter;
    this.oversizedAfter = null;
    // Live only and nothing delivered: the next connection starts at the engine's head, past it.
    if (after === null || this.last !== after) return false;
    const seq = after + 1;
    // Only an event of the history is passed: an engine whose head is below it sent something else
    // (a line that never ends); the connection is simply made again.
    const head = await this.options.engineHead?.().catch(() => null);
    if (this.stopped || (head !== undefined && head !== null && head < seq)) return false;
    // One look, no wait: the events after it must not wait for the indexer to catch up.
    await this.delivery.fillFromStore(seq);
    if (this.stopped) return false;
    if (this.last! < seq) this.delivery.report(seq, seq, `event ${seq} is longer than SSE_MAX_EVENT_BYTES and not in the database yet`);
    else {
      this.options.logger.warn({ seq }, 'engine SSE: an event longer than SSE_MAX_EVENT_BYTES was taken from the database');
      this.skipVerify = true; // comparing it would meet the same bound again
    }
    return true;
  }

  private async fillBeforeRetention(oldestSeq: number | null): Promise<void> {
    await this.delivery.fillFromStore(null);
    if (oldestSeq !== null && this.last !== null && this.last < oldestSeq - 1) this.delivery.report(this.last + 1, oldestSeq - 1);
    else if (oldestSeq === null && this.last !== null) this.delivery.report(this.last + 1, null);
  }
}
