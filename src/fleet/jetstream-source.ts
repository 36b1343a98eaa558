// A fleet replica's engine events from JetStream (NATS_URL): the relay (src/relay/) reads the engine
// once, and every replica consumes the stream from its own resume point (its stream position found
// by the engine seq in the message ids, src/fleet/jetstream.ts). An EngineEventSource with the SSE
// bridge's guarantees; it catches up with the stream's head at start before it is `ready`, so a
// replica started a second ago replays like an old one. It never stalls silently: behind the
// engine's head and not moving, it makes a new consumer and delivers what the database holds
// (docs/fleet.md "Behind the engine"; why each rule exists: ADR 0230).
import { AckPolicy, DeliverPolicy, nanos, type Consumer, type ConsumerMessages, type JetStreamManager, type NatsConnection } from 'nats';
import type { FastifyBaseLogger } from 'fastify';
import { parseEngineEvent, type EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink, EngineEventSource, SourceLag } from '../contracts/engine-event-source.js';
import { connectNats, directGet, isNotFound, streamBounds, streamSeqFor, streamTail, type DirectMessage, type StreamBounds } from './jetstream.js';
import { watchLeaderElections } from './leader-elections.js';
import { EngineLag } from './engine-lag.js';
import { OrderedDelivery, WakeableSleep, repeat, type SourceMetrics } from '../engine/ordered-delivery.js';
import { traced } from '../tracing/index.js';
import { DependencyState } from '../dependency-state.js';
import { systemClock, type Clock } from '../contracts/clock.js';

export interface JetStreamSourceOptions {
  url: string;
  stream: string;
  subject: string;
  /** With no start point: begin this many events before the stream's head (fills the replay history). */
  prefill: number;
  /** Where every event, skipped gap and history replacement goes. */
  sink: EngineEventSink;
  fillFrom: ((after: number, limit: number) => Promise<EngineEvent[]>) | null;
  logger: FastifyBaseLogger;
  metrics: SourceMetrics;
  gapReportMs?: number;
  /** The engine's newest seq (its /healthz maxSeq), null when it does not answer or say. */
  engineHead?: () => Promise<number | null>;
  /** Behind the engine's head by more than this many seconds: degraded (STREAM_BEHIND_MAX_S). */
  behindMaxS?: number;
  /** Behind and no progress for this long: the consumer is made again (default STALL_MS, 2 s). */
  stallMs?: number;
  clock?: Clock;
}

export type { SourceLag } from '../contracts/engine-event-source.js';

const WATCH_MS = 1_000;
/** Behind and not moving this long: stalled (an engine moving on never leaves a healthy consumer silent this long). */
const STALL_MS = 2_000;
/** Each JetStream API call (stream info, consumer create) gives up after this: a leader election takes longer, and is waited out by retrying. */
const API_TIMEOUT_MS = 2_000;
/** A consumer of this replica's left unused this long is removed by the server (one made before a crash or a recreation). */
const CONSUMER_IDLE_MS = 30_000;
/** How long the stream is read message by message when no consumer can be made, before trying one again. */
const DIRECT_READ_MS = 5_000;
/**
 * Each direct get gives up after this (then the API's message get is asked): a paused server's
 * replica still takes its share of the gets until it resumes, and a healthy one answers in ms.
 */
const DIRECT_GET_TIMEOUT_MS = 500;
/** The most stream messages a consumer skipped that are read back directly at once (more: the database, or a gap). */
const SKIPPED_MAX = 1_000;
/** A server that does not answer a stream info within this while the source is stalled is left for another. */
const SERVER_PROBE_MS = 1_000;

/** How one consumer's life ended; the loop handles each in one switch. */
type Outcome =
  | { kind: 'stopped' }
  /** Nothing is published yet: tried again shortly. */
  | { kind: 'empty' }
  /** A consumer was made and consumed until a renewal was asked for (a stall, a new leader). */
  | { kind: 'renewed' }
  /** No consumer (or no stream info) could be had, or it failed; the stream may have been read directly meanwhile. */
  | { kind: 'failed'; err: unknown };

/** The consumer side, as the watchdog and a new leader see it. */
interface Consuming {
  /** The pull under way (stopped to end the consumer early). */
  messages: ConsumerMessages | null;
  /** A new consumer was asked for: the current one ends after its pull. */
  renew: boolean;
  /** A direct reading is under way (readDirectly): the stall check leaves it to run its course. */
  reading: boolean;
}

/** The stall check's memory (watchdog). */
interface StallWatch {
  /** Where the position was last seen to move, and when. */
  progress: { seq: number | null; at: number };
  lastRecovery: number;
  /** Recoveries since the position last moved. */
  recoveries: number;
  reportedBehind: boolean;
  /** A check is running (they never overlap). */
  checking: boolean;
}

export class JetStreamSource implements EngineEventSource {
  readonly kind = 'jetstream' as const;
  private readonly delivery: OrderedDelivery;
  private readonly clock: Clock;
  private readonly pause: WakeableSleep;
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;
  private stopWatch: (() => void) | null = null;
  private nc: NatsConnection | null = null;
  private jsm: JetStreamManager | null = null;
  private connectedNow = false;
  /** One warning when NATS goes, one when it comes back (src/dependency-state.ts). */
  private readonly nats: DependencyState;
  private readonly engineLag: EngineLag;
  private consuming: Consuming = { messages: null, renew: false, reading: false };
  private stall: StallWatch;
  /**
   * The stream as last learnt: stream seq minus engine seq of its messages (constant within one
   * history; null until known), and whether it answers direct gets (else the API's message get).
   */
  private stream: { offset: number | null; direct: boolean } = { offset: null, direct: true };
  /** Delivery is serial: the consumer's messages and the watchdog's database fill never interleave. */
  private serial: Promise<void> = Promise.resolve();

  constructor(private readonly options: JetStreamSourceOptions) {
    this.clock = options.clock ?? systemClock;
    this.pause = new WakeableSleep(this.clock);
    this.nats = new DependencyState('nats', options.logger);
    this.delivery = new OrderedDelivery({ ...options, label: 'JetStream source', retention: 'JetStream retention', stopped: () => this.stopped, catchesUp: true, clock: this.clock });
    this.engineLag = new EngineLag(() => this.last, this.clock);
    this.stall = { progress: { seq: null, at: this.clock.now() }, lastRecovery: 0, recoveries: 0, reportedBehind: false, checking: false };
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  /** How far behind the engine's head this replica is, as of now. */
  lag(now = this.clock.now()): SourceLag {
    const l = this.engineLag.snapshot(now);
    const behind = l.seconds > (this.options.behindMaxS ?? 5);
    const stalled = (l.events ?? 0) > 0 && now - this.stall.progress.at >= (this.options.stallMs ?? STALL_MS);
    return { ...l, behind, stalled };
  }

  /** The last seq delivered (or the resume point). */
  private get last(): number | null {
    return this.delivery.last;
  }

  get position(): number | null {
    return this.last;
  }

  /** Reached the head the stream had when this replica began consuming (or the stream was empty then). */
  get ready(): boolean {
    return this.delivery.ready;
  }

  whenReady(): Promise<void> {
    return this.delivery.whenReady();
  }

  get connected(): boolean {
    return !this.delivery.catchingUp && this.connectedNow && this.nc !== null && !this.nc.isClosed();
  }

  get gap(): string | undefined {
    return this.delivery.gap;
  }

  /** Before the stream's head by the replay history's size, so that it is filled from the stream; null when NATS does not answer or the stream is empty. */
  async replayStart(historySize: number): Promise<number | null> {
    const bounds = await this.bounds();
    return bounds ? Math.max(bounds.firstEngineSeq - 1, bounds.lastEngineSeq - historySize) : null;
  }

  /** The stream's engine seqs, or null when NATS does not answer within `timeoutMs` or the stream is empty. */
  async bounds(timeoutMs = 2_000): Promise<StreamBounds | null> {
    return this.bounded(async () => streamBounds(await (await this.connection()).jetstreamManager(), this.options.stream), timeoutMs);
  }

  /** The history's first event (engine seq 1) when the stream still holds it, else null: a replica never opens an SSE connection of its own for it. */
  async firstEvent(timeoutMs = 2_000): Promise<EngineEvent | null> {
    return this.bounded(async () => {
      const jsm = await (await this.connection()).jetstreamManager();
      const bounds = await streamBounds(jsm, this.options.stream);
      if (!bounds || bounds.firstEngineSeq !== 1) return null;
      const m = await jsm.streams.getMessage(this.options.stream, { seq: bounds.firstStreamSeq });
      return parseEngineEvent(new TextDecoder().decode(m.data));
    }, timeoutMs);
  }

  /** `work`'s answer, or null when it fails or takes longer than `ms`. */
  private bounded<T>(work: () => Promise<T | null>, ms: number): Promise<T | null> {
    const timeout = new Promise<null>((r) => this.clock.setTimeout(() => r(null), ms).unref());
    return Promise.race([work().catch(() => null), timeout]);
  }

  start(after: number | null): void {
    if (this.running) return;
    this.delivery.startAfter(after);
    this.running = this.loop();
    this.stopWatch = repeat(this.clock, WATCH_MS, () => void this.watchdog(), { unref: true });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.stopWatch?.();
    this.stopWatch = null;
    this.consuming.messages?.stop();
    this.pause.wake();
    await this.running;
    this.delivery.markLive(); // nothing more will come: whoever waits for the catch-up is released
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
    watchLeaderElections(nc, this.options.stream, (leader) => this.leaderElected(leader));
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          this.connectedNow = false;
          this.nats.failed(`disconnected from ${String(s.data)}`);
        }
        if (s.type === 'reconnect') {
          if (this.consuming.messages) this.connectedNow = true;
          this.nats.answered();
        }
      }
    })();
    return nc;
  }

  /** A new stream leader: a new consumer now (whatever the old one's fate), the stall check counting from here. */
  private leaderElected(leader: string | null): void {
    if (this.stopped) return;
    this.options.logger.info({ leader, position: this.last }, 'JetStream source: new stream leader; making a new consumer from the position');
    this.stall.lastRecovery = this.clock.now();
    this.stall.recoveries = 0;
    this.renew();
  }

  /** Ends the current consumer after its pull; the loop makes a new one at once. */
  private renew(): void {
    this.consuming.renew = true;
    this.consuming.messages?.stop();
    this.pause.wake();
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    let failures = 0;
    let lastFailureLog = 0;
    while (!this.stopped) {
      const outcome = await this.consumeOnce().catch((err: unknown): Outcome => ({ kind: 'failed', err }));
      this.connectedNow = false;
      this.consuming.messages = null;
      if (this.stopped || outcome.kind === 'stopped') break;
      switch (outcome.kind) {
        case 'empty':
        case 'renewed':
          attempt = 0;
          break;
        case 'failed':
          // One line per 10 s of failures (with how many), not one per retry during an outage.
          failures++;
          if (this.clock.now() - lastFailureLog >= 10_000) {
            this.options.logger.warn({ err: (outcome.err as Error).message, failures, server: this.nc?.info?.server_name }, 'JetStream source: consume failed');
            lastFailureLog = this.clock.now();
            failures = 0;
          }
          break;
      }
      this.options.metrics.reconnects.inc();
      await this.pause.sleep(Math.min(500, 100 * 2 ** Math.min(attempt++, 3)));
    }
  }

  private async consumeOnce(): Promise<Outcome> {
    // The consumer made now is the one a renewal asked for (one asked while none was running must
    // not end it before its first pull).
    this.consuming.renew = false;
    // Each (re)connection is a span of its own (src/tracing/): the time to reach the stream again.
    const made = await traced('engine stream connect', () => this.subscribe(), { kind: 'client', attributes: { 'engine.stream.source': 'jetstream', 'engine.stream.after': this.last ?? -1 } });
    if (made.kind !== 'consumer') return made;
    const { consumer, name } = made;
    try {
      // Bounded pulls, each ending by itself (a batch, or `expires`): nothing here can wait for
      // ever on a server that went away; the watchdog ends a pull early to make a new consumer.
      while (!this.stopped && !this.consuming.renew) {
        const batch = await consumer.fetch({ max_messages: 1_000, expires: 2_000 });
        this.consuming.messages = batch;
        for await (const m of batch) {
          if (this.stopped) break;
          await this.handle({ seq: m.seq, text: m.string() });
        }
        this.consuming.messages = null;
      }
    } finally {
      this.consuming.renew = false;
      this.consuming.messages = null;
      // An ephemeral consumer also goes by itself after CONSUMER_IDLE_MS unused; this is only tidier.
      void this.jsm?.consumers.delete(this.options.stream, name).catch(() => undefined);
    }
    return this.stopped ? { kind: 'stopped' } : { kind: 'renewed' };
  }

  /**
   * Makes an ephemeral pull consumer starting after the last delivered event (no acks, in memory,
   * one copy: it is this replica's alone and made again whenever in doubt). The library's ordered
   * consumer is not used: after the death of its server it kept retrying inside `consume()`
   * without ever returning or failing (ADR 0120).
   */
  private async subscribe(): Promise<Outcome | { kind: 'consumer'; consumer: Consumer; name: string }> {
    const nc = await this.connection();
    const jsm = await nc.jetstreamManager({ timeout: API_TIMEOUT_MS, checkAPI: false }); // no account-info round trip: the stream info below says as much
    this.jsm = jsm;
    let bounds: StreamBounds | null;
    try {
      bounds = await streamBounds(jsm, this.options.stream);
    } catch (err) {
      // Without a meta leader (an election of its own, measured at up to 25 s on 2.9.10) the
      // servers answer stream infos 503 while the stream itself still serves: a replica with a
      // position reads on from it directly meanwhile.
      if (this.last === null || this.stream.offset === null) throw err;
      this.options.logger.info({ err: (err as Error).message, after: this.last }, 'JetStream source: no stream info; reading the stream directly');
      await this.readDirectly(nc, this.last + 1 + this.stream.offset);
      return { kind: 'failed', err };
    }
    if (!bounds) {
      this.delivery.catchUpTo(null); // nothing published when consumption began: no history to catch up with
      return { kind: 'empty' };
    }
    this.stream.direct = bounds.allowDirect;
    if (this.last === null) this.delivery.startAfter(Math.max(bounds.firstEngineSeq - 1, bounds.lastEngineSeq - this.options.prefill));
    this.delivery.catchUpTo(bounds.lastEngineSeq);
    // Learnt once: a later stream at another offset is another history (a purge), told by handle().
    this.stream.offset ??= bounds.lastStreamSeq - bounds.lastEngineSeq;
    if (this.last! + 1 < bounds.firstEngineSeq) {
      // Older than the stream's retention: the database first, then the stream.
      await this.serially(async () => {
        await this.delivery.fillFromStore(bounds.firstEngineSeq - 1);
        if (this.last! + 1 < bounds.firstEngineSeq) this.delivery.report(this.last! + 1, bounds.firstEngineSeq - 1);
      });
    }
    const startSeq = (await streamSeqFor(jsm, this.options.stream, this.last! + 1, bounds)) ?? bounds.lastStreamSeq + 1;
    let info;
    try {
      info = await jsm.consumers.add(this.options.stream, {
        ack_policy: AckPolicy.None,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: startSeq,
        filter_subject: this.options.subject,
        mem_storage: true,
        num_replicas: 1,
        inactive_threshold: nanos(CONSUMER_IDLE_MS),
      });
    } catch (err) {
      // Making a consumer needs the cluster's meta leader, reading a message only the stream's
      // leader: after a server death the stream is often readable again seconds before consumers
      // can be made. Meanwhile the stream is read message by message; then a consumer is tried again.
      this.options.logger.info({ err: (err as Error).message, streamSeq: startSeq }, 'JetStream source: no consumer yet; reading the stream directly');
      await this.readDirectly(nc, startSeq);
      return { kind: 'failed', err };
    }
    const consumer = await nc.jetstream({ timeout: API_TIMEOUT_MS }).consumers.get(this.options.stream, info.name);
    this.connectedNow = true;
    this.options.logger.info({ after: this.last, streamSeq: startSeq, consumer: info.name, server: nc.info?.server_name }, 'JetStream source: consuming');
    return { kind: 'consumer', consumer, name: info.name };
  }

  /**
   * Reads the stream from `streamSeq` by direct gets (64 at a time) for up to DIRECT_READ_MS,
   * delivering through the same path as a consumer's messages, until a renewal is asked for. A
   * direct get (the stream's `allow_direct`, set by the relay) is answered by any server holding
   * the stream, with neither the meta leader nor the JetStream API involved, so it works through
   * a meta election; a stream without it is read with the API's message get. A missing message is
   * the end of what the answering server holds, and so is a get that failed: read again 100 ms later.
   */
  private async readDirectly(nc: NatsConnection, streamSeq: number): Promise<void> {
    const jsm = await nc.jetstreamManager({ timeout: DIRECT_GET_TIMEOUT_MS, checkAPI: false });
    const get = (seq: number) => this.storedMessage(nc, jsm, seq);
    // This reading answers whatever renewal was asked while the consumer was being made: only a
    // new leader ends it early (the stall check leaves a reading alone, see recover()).
    this.consuming.renew = false;
    this.consuming.reading = true;
    const began = this.clock.now();
    const until = began + DIRECT_READ_MS;
    let seq = streamSeq;
    let failed = 0;
    try {
      while (!this.stopped && !this.consuming.renew && this.clock.now() < until) {
        const seqs = Array.from({ length: 64 }, (_, i) => seq + i);
        // A get that failed (timed out on a server that stopped answering) ends the batch like a
        // missing message: the next one, 100 ms later, may reach another server.
        const settled = await Promise.allSettled(seqs.map(get));
        failed += settled.filter((r) => r.status === 'rejected').length;
        const stored = settled.map((r) => (r.status === 'fulfilled' ? r.value : null));
        let read = 0;
        for (const m of stored) {
          if (!m || this.consuming.renew) break;
          if (m.subject === this.options.subject) await this.handle({ seq: m.seq, text: new TextDecoder().decode(m.data) });
          read++;
        }
        seq += read;
        if (read < seqs.length) await this.pause.sleep(100);
      }
    } finally {
      this.consuming.reading = false;
    }
    this.options.logger.info({ fromStreamSeq: streamSeq, read: seq - streamSeq, failedGets: failed, ms: this.clock.now() - began, direct: this.stream.direct }, 'JetStream source: read the stream directly');
  }

  /**
   * The stream's message at `seq` (null: not stored, as far as the server answering knows).
   * `leaderWhenMissing`: a direct get's "not found" is asked of the leader too. A direct get may be
   * answered by a follower a few messages behind (nats-server 2.9), which is no proof that the
   * stream lacks a message the leader's consumer has already passed.
   */
  private async storedMessage(nc: NatsConnection, jsm: JetStreamManager, seq: number, leaderWhenMissing = false): Promise<DirectMessage | null> {
    const notFound = (err: unknown): null => {
      if (isNotFound(err)) return null;
      throw err;
    };
    if (this.stream.direct) {
      // Unanswered (a paused server's replica took it, or the stream stopped allowing direct
      // gets): the API's message get, answered by the stream's leader.
      const m = await directGet(nc, this.options.stream, seq, DIRECT_GET_TIMEOUT_MS).catch(() => undefined);
      if (m !== undefined && (m !== null || !leaderWhenMissing)) return m;
    }
    return jsm.streams.getMessage(this.options.stream, { seq }).then((m) => ({ seq: m.seq, subject: m.subject, data: m.data }), notFound);
  }

  private serially(fn: () => Promise<void>): Promise<void> {
    const run = this.serial.then(fn);
    this.serial = run.catch(() => undefined);
    return run;
  }

  /** One message of the consumer, after whatever delivery is running (serial). */
  private handle(m: { seq: number; text: string }): Promise<void> {
    return this.serially(() => this.handleNow(m));
  }

  private async handleNow(m: { seq: number; text: string }): Promise<void> {
    const event = parseEngineEvent(m.text);
    if (!event) {
      this.options.logger.warn({ streamSeq: m.seq }, 'JetStream source: malformed event ignored');
      return;
    }
    const last = this.last;
    const offset = m.seq - event.seq;
    const sameHistory = this.stream.offset === offset;
    // Already delivered (a consumer made again from an older stream seq, a tail republished after
    // a leader change, or the database got there first): same history, nothing to do.
    if (last !== null && event.seq <= last && sameHistory) return;
    this.stream.offset = offset;
    if (last !== null && event.seq <= last) {
      // An ordered consumer never goes back: an older engine seq at another offset is a new engine history.
      this.engineLag.reset();
      await this.delivery.replaced(event.seq - 1, `engine history replaced: stream went from seq ${last} to ${event.seq}`);
    } else if (last !== null && event.seq > last + 1) {
      // Same stream-seq offset: the stream holds the events in between at the stream seqs in
      // between (another offset is a hole the relay left, which the stream never held).
      if (sameHistory) await this.readSkipped(last + 1 + offset, m.seq - 1);
      await this.delivery.fillFromStore(event.seq - 1);
      if (this.last! < event.seq - 1) this.delivery.report(this.last! + 1, event.seq - 1);
    }
    this.delivery.deliver([event]);
  }

  /**
   * Delivers stream seqs `from`..`to` (at most SKIPPED_MAX) by direct gets, in order, until one is
   * missing: messages a consumer skipped though the stream holds them (a pull with no acks can lose
   * what the server sent just as the client gave the pull up; ADR 0230).
   */
  private async readSkipped(from: number, to: number): Promise<void> {
    const nc = this.nc;
    const jsm = this.jsm;
    if (!nc || nc.isClosed() || !jsm) return;
    const until = Math.min(to, from + SKIPPED_MAX - 1);
    this.options.logger.warn({ fromStreamSeq: from, toStreamSeq: to }, 'JetStream source: the consumer skipped stream messages; reading them directly');
    for (let seq = from; seq <= until; ) {
      const seqs = Array.from({ length: Math.min(64, until - seq + 1) }, (_, i) => seq + i);
      // Skipped messages precede one the leader's consumer delivered: only the leader's "not found" counts.
      const stored = await Promise.all(seqs.map((n) => this.storedMessage(nc, jsm, n, true).catch(() => null)));
      for (const m of stored) {
        if (!m) return;
        if (m.subject === this.options.subject) await this.handleNow({ seq: m.seq, text: new TextDecoder().decode(m.data) });
        seq++;
      }
    }
  }

  /** Every second: observe the engine's head, keep the lag measured against it, and recover from a stall. Never throws; never overlaps itself. */
  private async watchdog(): Promise<void> {
    const stall = this.stall;
    if (stall.checking || this.stopped) return;
    stall.checking = true;
    try {
      const head = await this.observeHead();
      if (head !== null) this.engineLag.observe(head, this.clock.now());
      const now = this.clock.now();
      if (this.last !== stall.progress.seq) {
        stall.progress = { seq: this.last, at: now };
        stall.recoveries = 0;
      }
      const lag = this.lag(now);
      // The event-age gauge must not freeze while the replica is behind: it is at least the lag.
      if ((lag.events ?? 0) > 0 || lag.behind) this.options.metrics.lagSeconds.set(Math.max(lag.seconds, this.eventAge(now)));
      if (lag.behind && !stall.reportedBehind) {
        stall.reportedBehind = true;
        this.options.logger.warn({ position: this.last, engineHead: lag.engineHead, behindEvents: lag.events, behindSeconds: lag.seconds }, 'JetStream source: behind the engine');
      } else if (!lag.behind && stall.reportedBehind && (lag.events ?? 0) === 0) {
        stall.reportedBehind = false;
        this.options.logger.warn({ position: this.last, engineHead: lag.engineHead }, 'JetStream source: caught up with the engine again');
      }
      if (lag.stalled && now - stall.lastRecovery >= (this.options.stallMs ?? STALL_MS)) {
        stall.lastRecovery = now;
        await this.recover(lag);
      }
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'JetStream source: watchdog failed');
    } finally {
      stall.checking = false;
    }
  }

  private eventAge(now: number): number {
    const ts = Date.parse(this.delivery.lastEvent?.ts ?? '');
    return Number.isFinite(ts) ? Math.max(0, (now - ts) / 1000) : 0;
  }

  /** The engine's head: the engine itself, else what the stream holds (each bounded in time). */
  private async observeHead(): Promise<number | null> {
    const fromEngine = this.options.engineHead ? await this.bounded(this.options.engineHead, 1_500) : null;
    if (fromEngine !== null) return fromEngine;
    const nc = this.nc;
    if (!nc || nc.isClosed() || !this.connectedNow) return null;
    const tail = await this.bounded(() => nc.jetstreamManager({ timeout: 1_500, checkAPI: false }).then((jsm) => streamTail(jsm, this.options.stream)), 1_500);
    return tail?.lastEngineSeq ?? null;
  }

  /** Moves the connection to another server when its own does not answer a stream info within SERVER_PROBE_MS. */
  private async leaveIfSilent(nc: NatsConnection): Promise<void> {
    const position = this.last;
    const answered = await nc
      .jetstreamManager({ timeout: SERVER_PROBE_MS, checkAPI: false })
      .then((jsm) => jsm.streams.info(this.options.stream))
      .then(
        () => true,
        () => false,
      );
    // Moving cuts the pulls in flight (a message the server sent on the old socket is lost to the
    // consumer): not once events flow again, whatever the probe said meanwhile.
    if (answered || nc.isClosed() || this.stopped || this.last !== position) return;
    this.options.logger.warn({ server: nc.info?.server_name }, 'JetStream source: still stalled and the server does not answer; moving to another NATS server');
    void nc.reconnect().catch(() => undefined);
  }

  /** Behind and not moving: a new consumer from the position, and meanwhile what the database holds. */
  private async recover(lag: SourceLag): Promise<void> {
    this.options.logger.warn(
      { position: this.last, engineHead: lag.engineHead, behindEvents: lag.events, behindSeconds: lag.seconds, consuming: this.consuming.messages !== null },
      'JetStream source: stalled behind the engine; making a new consumer from the position',
    );
    this.options.metrics.reconnects.inc();
    // Still stalled at the second attempt in a row: the server may be the problem without having
    // closed the socket (paused, half-partitioned); it is left for another if it does not answer.
    if (++this.stall.recoveries >= 2 && this.nc && !this.nc.isClosed()) {
      this.stall.recoveries = 0;
      void this.leaveIfSilent(this.nc);
    }
    // A direct reading under way is left to run its course (it ends by itself after DIRECT_READ_MS).
    if (!this.consuming.reading) this.renew();
    if (this.options.fillFrom && this.last !== null && lag.engineHead !== null) {
      const head = lag.engineHead;
      await this.serially(() => this.delivery.fillFromStore(head));
    }
  }
}
