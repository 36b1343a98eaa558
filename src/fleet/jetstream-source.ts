// A replica's engine events from JetStream (NATS_URL), in place of its own SSE connection to the
// engine: the relay (src/relay/) reads the engine once and every replica consumes the stream from
// its own resume point with an ordered consumer. An EngineEventSource like the SSE bridge, with the
// same guarantees toward its sink (src/contracts/engine-event-source.ts): every seq at most once,
// strictly increasing; a gap is filled from the indexer's `events` table (`fillFrom`) or reported
// (`gap` in /readyz) and skipped.
//
// Resume point: the replica's own last seq; its stream position is found by the engine seq in the
// message ids (src/fleet/jetstream.ts). A resume point older than the stream's retention is
// filled from the database first. An engine seq going backwards is the relay's purge after the
// engine's history was replaced: the sink is told (`replaced`, awaited) as with the SSE bridge.
//
// `bounds()` lets the runtime choose a start point BEFORE its newest events, so that a replica
// started a second ago fills its replay history from the stream like an old one (live.ts).
import { DeliverPolicy, type ConsumerMessages, type JsMsg, type NatsConnection } from 'nats';
import type { FastifyBaseLogger } from 'fastify';
import { parseEngineEvent, type EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink, EngineEventSource } from '../contracts/engine-event-source.js';
import { connectNats, streamBounds, streamSeqFor, type StreamBounds } from './jetstream.js';
import { OrderedDelivery, WakeableSleep, type SourceMetrics } from '../engine/ordered-delivery.js';
import { traced } from '../tracing/index.js';
import { DependencyState } from '../dependency-state.js';

export interface JetStreamSourceOptions {
  url: string;
  stream: string;
  subject: string;
  startAfter: number | null;
  /** With no start point: begin this many events before the stream's head (fills the replay history). */
  prefill: number;
  /** Where every event, skipped gap and history replacement goes. */
  sink: EngineEventSink;
  fillFrom: ((after: number, limit: number) => Promise<EngineEvent[]>) | null;
  logger: FastifyBaseLogger;
  metrics: SourceMetrics;
  gapReportMs?: number;
}

export class JetStreamSource implements EngineEventSource {
  private readonly delivery: OrderedDelivery;
  private readonly pause = new WakeableSleep();
  private nc: NatsConnection | null = null;
  private messages: ConsumerMessages | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private connectedNow = false;
  /** One warning when NATS goes, one when it comes back (src/dependency-state.ts). */
  private readonly nats: DependencyState;
  /** The stream's head when consumption began: not ready (`connected`) until it is reached. */
  private catchUpTo: number | null = null;
  /** Nothing was published when consumption began: there is no history to catch up with. */
  private emptyAtStart = false;

  constructor(private readonly options: JetStreamSourceOptions) {
    this.nats = new DependencyState('nats', options.logger);
    this.delivery = new OrderedDelivery({
      ...options,
      label: 'JetStream source',
      retention: 'JetStream retention',
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

  /**
   * Reached the head the stream had when this replica began consuming (or the stream was empty
   * then): what it delivers from now on is live, not the replay that fills its history.
   */
  get caughtUp(): boolean {
    return this.emptyAtStart || (this.catchUpTo !== null && this.last !== null && this.last >= this.catchUpTo);
  }

  /** Whether the event `seq` comes after the head the stream had at start (or the stream was empty then): a live event, not catch-up. */
  isLive(seq: number): boolean {
    return this.emptyAtStart || (this.catchUpTo !== null && seq > this.catchUpTo);
  }

  get connected(): boolean {
    const caughtUp = this.catchUpTo === null || (this.last !== null && this.last >= this.catchUpTo);
    return caughtUp && this.connectedNow && this.nc !== null && !this.nc.isClosed();
  }

  get gap(): string | undefined {
    return this.delivery.gap;
  }

  /** The stream's engine seqs, or null when NATS does not answer within `timeoutMs` or the stream is empty. */
  async bounds(timeoutMs = 2_000): Promise<StreamBounds | null> {
    const attempt = (async () => {
      const nc = await this.connection();
      return streamBounds(await nc.jetstreamManager(), this.options.stream);
    })();
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref());
    return Promise.race([attempt.catch(() => null), timeout]);
  }

  /**
   * The history's first event (engine seq 1) when the stream still holds it, else null: what the
   * stream's epoch is derived from, so a replica never opens an SSE connection of its own for it.
   */
  async firstEvent(timeoutMs = 2_000): Promise<EngineEvent | null> {
    const attempt = (async () => {
      const jsm = await (await this.connection()).jetstreamManager();
      const bounds = await streamBounds(jsm, this.options.stream);
      if (!bounds || bounds.firstEngineSeq !== 1) return null;
      const m = await jsm.streams.getMessage(this.options.stream, { seq: bounds.firstStreamSeq });
      return parseEngineEvent(new TextDecoder().decode(m.data));
    })();
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref());
    return Promise.race([attempt.catch(() => null), timeout]);
  }

  /** Sets the start point (before `start()`; the runtime may choose it after `bounds()`). */
  startAfter(seq: number | null): void {
    this.delivery.startAfter(seq);
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.messages?.stop();
    this.pause.wake();
    await this.running;
    await this.nc?.close().catch(() => undefined);
  }

  private async connection(): Promise<NatsConnection> {
    if (this.nc && !this.nc.isClosed()) return this.nc;
    let nc: NatsConnection;
    try {
      nc = await connectNats(this.options.url, `gateway-${process.pid}`);
    } catch (err) {
      this.nats.failed((err as Error).message);
      throw err;
    }
    this.nats.answered();
    this.nc = nc;
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.connectedNow = false;
        if (s.type === 'reconnect' && this.messages) this.connectedNow = true;
        if (s.type === 'disconnect') this.nats.failed(`disconnected from ${String(s.data)}`);
        if (s.type === 'reconnect') this.nats.answered();
      }
    })();
    return nc;
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      try {
        await this.consumeOnce();
        attempt = 0;
      } catch (err) {
        if (!this.stopped) this.options.logger.warn({ err: (err as Error).message }, 'JetStream source: consume failed');
      }
      this.connectedNow = false;
      this.messages = null;
      if (this.stopped) break;
      this.options.metrics.reconnects.inc();
      await this.pause.sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt++, 5)));
    }
  }

  private async consumeOnce(): Promise<void> {
    // Each (re)connection is a span of its own (src/tracing/): the time to reach the stream again.
    const messages = await traced('engine stream connect', () => this.subscribe(), { kind: 'client', attributes: { 'engine.stream.source': 'jetstream', 'engine.stream.after': this.last ?? -1 } });
    if (!messages) return;
    for await (const m of messages) {
      if (this.stopped) break;
      await this.handle(m);
    }
  }

  /** Positions an ordered consumer after the last delivered event; null when nothing is published yet. */
  private async subscribe(): Promise<ConsumerMessages | null> {
    const nc = await this.connection();
    const jsm = await nc.jetstreamManager();
    const bounds = await streamBounds(jsm, this.options.stream);
    if (!bounds) {
      if (this.catchUpTo === null) this.emptyAtStart = true;
      return null; // nothing published yet: try again shortly
    }
    if (this.last === null) this.startAfter(Math.max(bounds.firstEngineSeq - 1, bounds.lastEngineSeq - this.options.prefill));
    this.catchUpTo ??= bounds.lastEngineSeq;
    if (this.last! + 1 < bounds.firstEngineSeq) {
      // Older than the stream's retention: the database first, then the stream.
      await this.delivery.fillFromStore(bounds.firstEngineSeq - 1);
      if (this.last! + 1 < bounds.firstEngineSeq) this.delivery.report(this.last! + 1, bounds.firstEngineSeq - 1);
    }
    const startSeq = (await streamSeqFor(jsm, this.options.stream, this.last! + 1, bounds)) ?? bounds.lastStreamSeq + 1;
    const consumer = await nc.jetstream().consumers.get(this.options.stream, {
      filterSubjects: this.options.subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: startSeq,
    });
    const messages = await consumer.consume({ max_messages: 1_000 });
    this.messages = messages;
    this.connectedNow = true;
    this.options.logger.info({ after: this.last, streamSeq: startSeq }, 'JetStream source: consuming');
    return messages;
  }

  private async handle(m: JsMsg): Promise<void> {
    const event = parseEngineEvent(m.string());
    if (!event) {
      this.options.logger.warn({ streamSeq: m.seq }, 'JetStream source: malformed event ignored');
      return;
    }
    const last = this.last;
    if (last !== null && event.seq <= last) {
      // An ordered consumer never goes back: an older engine seq is a new engine history.
      const text = `engine history replaced: stream went from seq ${last} to ${event.seq}`;
      this.delivery.announce(text);
      this.options.logger.error({ last, seq: event.seq }, `JetStream source: ${text}`);
      this.last = event.seq - 1;
      try {
        await this.options.sink.replaced(event.seq - 1);
      } catch (err) {
        this.options.logger.error({ err }, 'JetStream source: the runtime failed to reset after a history replacement');
      }
    } else if (last !== null && event.seq > last + 1) {
      await this.delivery.fillFromStore(event.seq - 1);
      if (this.last! < event.seq - 1) this.delivery.report(this.last! + 1, event.seq - 1);
    }
    this.delivery.deliverBatched(event);
  }
}
