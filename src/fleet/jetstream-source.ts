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
//
// No silent stall (docs/fleet.md "Behind the engine"): every second the source observes the
// engine's head (the engine's /healthz maxSeq, else the stream's last message) and measures how far
// its own position is behind it (src/fleet/engine-lag.ts). Behind and not moving for STALL_MS, it
// logs a warning, drops its consumer and makes a new one from its position (whatever broke the
// old one: a dead seed, a dead stream leader, a rolled-back tail, a partition), and while NATS
// gives nothing it delivers what the indexer's `events` table already holds. An engine seq at or
// below the position at the stream seq where it already was (same stream-seq offset) is a
// redelivery after such a recreation or after a tail was republished: skipped, never taken for a
// replaced history.
//
// A new stream leader (the cluster's advisory, src/fleet/leader-elections.ts) makes a new consumer
// at once: after a leader's death nothing works until the election and everything right after it,
// so the source does not wait for its next stall check to notice.
import { AckPolicy, DeliverPolicy, nanos, type Consumer, type ConsumerMessages, type JetStreamManager, type NatsConnection } from 'nats';
import type { FastifyBaseLogger } from 'fastify';
import { parseEngineEvent, type EngineEvent } from '../contracts/engine-event.js';
import type { EngineEventSink, EngineEventSource } from '../contracts/engine-event-source.js';
import { connectNats, directGet, isNotFound, streamBounds, streamSeqFor, streamTail, type DirectMessage, type StreamBounds } from './jetstream.js';
import { watchLeaderElections } from './leader-elections.js';
import { EngineLag } from './engine-lag.js';
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
  /** The engine's newest seq (its /healthz maxSeq), null when it does not answer or say. */
  engineHead?: () => Promise<number | null>;
  /** Behind the engine's head by more than this many seconds: degraded (STREAM_BEHIND_MAX_S). */
  behindMaxS?: number;
  /** Behind and no progress for this long: the consumer is made again (default STALL_MS, 2 s). */
  stallMs?: number;
}

/** What /readyz, the metrics and the hub learn about the replica's lag behind the engine. */
export interface SourceLag {
  engineHead: number | null;
  events: number | null;
  seconds: number;
  /** Further behind than the configured bound. */
  behind: boolean;
  /** Behind and not moving: the source is recovering (new consumer, database). */
  stalled: boolean;
}

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

export class JetStreamSource implements EngineEventSource {
  private readonly delivery: OrderedDelivery;
  private readonly pause = new WakeableSleep();
  private nc: NatsConnection | null = null;
  private messages: ConsumerMessages | null = null;
  private jsm: JetStreamManager | null = null;
  /** The watchdog asked for a new consumer: the current one ends after its pull. */
  private renew = false;
  private stopped = false;
  private running: Promise<void> | null = null;
  private connectedNow = false;
  /** One warning when NATS goes, one when it comes back (src/dependency-state.ts). */
  private readonly nats: DependencyState;
  /** The stream's head when consumption began: not ready (`connected`) until it is reached. */
  private catchUpTo: number | null = null;
  /** Nothing was published when consumption began: there is no history to catch up with. */
  private emptyAtStart = false;
  private readonly lag: EngineLag;
  private watch: NodeJS.Timeout | null = null;
  private polling = false;
  /** Where the position was last seen to move, and when. */
  private progress = { seq: null as number | null, at: Date.now() };
  private lastRecovery = 0;
  /** Recoveries since the position last moved. */
  private recoveries = 0;
  private reportedBehind = false;
  /** Stream seq minus engine seq of the stream's messages (constant within one history), null until known. */
  private offset: number | null = null;
  /** A direct reading is under way (readDirectly). */
  private reading = false;
  /** The stream answers direct gets (else the API's message get): as its last stream info said; the relay sets it. */
  private direct = true;
  /** Delivery is serial: the consumer's messages and the watchdog's database fill never interleave. */
  private serial: Promise<void> = Promise.resolve();

  constructor(private readonly options: JetStreamSourceOptions) {
    this.nats = new DependencyState('nats', options.logger);
    this.delivery = new OrderedDelivery({
      ...options,
      label: 'JetStream source',
      retention: 'JetStream retention',
      stopped: () => this.stopped,
    });
    this.lag = new EngineLag(() => this.last);
  }

  /** How far behind the engine's head this replica is, as of now. */
  lagStatus(now = Date.now()): SourceLag {
    const l = this.lag.snapshot(now);
    const behind = l.seconds > (this.options.behindMaxS ?? 5);
    const stalled = (l.events ?? 0) > 0 && now - this.progress.at >= (this.options.stallMs ?? STALL_MS);
    return { ...l, behind, stalled };
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
    if (!this.watch) {
      this.watch = setInterval(() => void this.watchdog(), WATCH_MS);
      this.watch.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watch) clearInterval(this.watch);
    this.watch = null;
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
    watchLeaderElections(nc, this.options.stream, (leader) => this.leaderElected(leader));
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

  /** A new stream leader: a new consumer now (whatever the old one's fate), the stall check counting from here. */
  private leaderElected(leader: string | null): void {
    if (this.stopped) return;
    this.options.logger.info({ leader, position: this.last }, 'JetStream source: new stream leader; making a new consumer from the position');
    this.lastRecovery = Date.now();
    this.recoveries = 0;
    this.renew = true;
    this.messages?.stop();
    this.pause.wake();
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    let failures = 0;
    let lastFailureLog = 0;
    while (!this.stopped) {
      try {
        await this.consumeOnce();
        attempt = 0;
      } catch (err) {
        // One line per 10 s of failures (with how many), not one per retry during an outage.
        failures++;
        if (!this.stopped && Date.now() - lastFailureLog >= 10_000) {
          this.options.logger.warn({ err: (err as Error).message, failures, server: this.nc?.info?.server_name }, 'JetStream source: consume failed');
          lastFailureLog = Date.now();
          failures = 0;
        }
      }
      this.connectedNow = false;
      this.messages = null;
      if (this.stopped) break;
      this.options.metrics.reconnects.inc();
      await this.pause.sleep(Math.min(500, 100 * 2 ** Math.min(attempt++, 3)));
    }
  }

  private async consumeOnce(): Promise<void> {
    // The consumer made now is the one a renewal asked for (one asked while none was running must
    // not end it before its first pull).
    this.renew = false;
    // Each (re)connection is a span of its own (src/tracing/): the time to reach the stream again.
    const made = await traced('engine stream connect', () => this.subscribe(), { kind: 'client', attributes: { 'engine.stream.source': 'jetstream', 'engine.stream.after': this.last ?? -1 } });
    if (!made) return;
    const { consumer, name } = made;
    try {
      // Bounded pulls, each ending by itself (a batch, or `expires`): nothing here can wait for
      // ever on a server that went away; the watchdog ends a pull early to make a new consumer.
      while (!this.stopped && !this.renew) {
        const batch = await consumer.fetch({ max_messages: 1_000, expires: 2_000 });
        this.messages = batch;
        for await (const m of batch) {
          if (this.stopped) break;
          await this.handle({ seq: m.seq, text: m.string() });
        }
        this.messages = null;
      }
    } finally {
      this.renew = false;
      this.messages = null;
      // An ephemeral consumer also goes by itself after CONSUMER_IDLE_MS unused; this is only tidier.
      void this.jsm?.consumers.delete(this.options.stream, name).catch(() => undefined);
    }
  }

  /**
   * Makes an ephemeral pull consumer starting after the last delivered event (no acks, in memory,
   * one copy: it is this replica's alone and made again whenever in doubt). null when nothing is
   * published yet. The library's ordered consumer is not used: after the death of its server it
   * kept retrying inside `consume()` without ever returning or failing (ADR 0120).
   */
  private async subscribe(): Promise<{ consumer: Consumer; name: string } | null> {
    const nc = await this.connection();
    const jsm = await nc.jetstreamManager({ timeout: API_TIMEOUT_MS, checkAPI: false }); // no account-info round trip: the stream info below says as much
    this.jsm = jsm;
    let bounds: StreamBounds | null;
    try {
      bounds = await streamBounds(jsm, this.options.stream);
    } catch (err) {
      // Without a meta leader (its server died: an election of its own, measured at up to 25 s on
      // 2.9.10) the servers answer stream infos 503 while the stream itself still serves: a
      // replica with a position reads on from it directly meanwhile.
      if (this.last === null || this.offset === null) throw err;
      this.options.logger.info({ err: (err as Error).message, after: this.last }, 'JetStream source: no stream info; reading the stream directly');
      await this.readDirectly(nc, this.last + 1 + this.offset);
      throw err;
    }
    if (!bounds) {
      if (this.catchUpTo === null) this.emptyAtStart = true;
      return null; // nothing published yet: try again shortly
    }
    this.direct = bounds.allowDirect;
    if (this.last === null) this.startAfter(Math.max(bounds.firstEngineSeq - 1, bounds.lastEngineSeq - this.options.prefill));
    this.catchUpTo ??= bounds.lastEngineSeq;
    // Learnt once: a later stream at another offset is another history (a purge), told by handle().
    this.offset ??= bounds.lastStreamSeq - bounds.lastEngineSeq;
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
      throw err;
    }
    const consumer = await nc.jetstream({ timeout: API_TIMEOUT_MS }).consumers.get(this.options.stream, info.name);
    this.connectedNow = true;
    this.options.logger.info({ after: this.last, streamSeq: startSeq, consumer: info.name, server: nc.info?.server_name }, 'JetStream source: consuming');
    return { consumer, name: info.name };
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
    // This reading is the answer to whatever renewal was asked while the consumer was being made
    // (a stall check while its creation timed out): only a new leader ends it early (the stall
    // check leaves a reading alone, see recover()).
    this.renew = false;
    this.reading = true;
    const began = Date.now();
    const until = began + DIRECT_READ_MS;
    let seq = streamSeq;
    let failed = 0;
    try {
      while (!this.stopped && !this.renew && Date.now() < until) {
        const seqs = Array.from({ length: 64 }, (_, i) => seq + i);
        // A get that failed (timed out on a server that stopped answering) ends the batch like a
        // missing message: the next one, 100 ms later, may reach another server.
        const settled = await Promise.allSettled(seqs.map(get));
        failed += settled.filter((r) => r.status === 'rejected').length;
        const stored = settled.map((r) => (r.status === 'fulfilled' ? r.value : null));
        let read = 0;
        for (const m of stored) {
          if (!m || this.renew) break;
          if (m.subject === this.options.subject) await this.handle({ seq: m.seq, text: new TextDecoder().decode(m.data) });
          read++;
        }
        seq += read;
        if (read < seqs.length) await this.pause.sleep(100);
      }
    } finally {
      this.reading = false;
    }
    this.options.logger.info({ fromStreamSeq: streamSeq, read: seq - streamSeq, failedGets: failed, ms: Date.now() - began, direct: this.direct }, 'JetStream source: read the stream directly');
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
    if (this.direct) {
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
    if (last !== null && event.seq <= last && this.offset === offset) {
      // Already delivered (a consumer made again from an older stream seq, a tail republished
      // after a leader change, or the database got there first): same history, nothing to do.
      return;
    }
    const sameHistory = this.offset === offset;
    this.offset = offset;
    if (last !== null && event.seq <= last) {
      // An ordered consumer never goes back: an older engine seq at another offset is a new engine history.
      const text = `engine history replaced: stream went from seq ${last} to ${event.seq}`;
      this.delivery.announce(text);
      this.options.logger.error({ last, seq: event.seq }, `JetStream source: ${text}`);
      this.last = event.seq - 1;
      this.lag.reset();
      try {
        await this.options.sink.replaced(event.seq - 1);
      } catch (err) {
        this.options.logger.error({ err }, 'JetStream source: the runtime failed to reset after a history replacement');
      }
    } else if (last !== null && event.seq > last + 1) {
      // Same stream-seq offset: the stream holds the events in between at the stream seqs in
      // between (another offset is a hole the relay left, which the stream never held).
      if (sameHistory) await this.readSkipped(last + 1 + offset, m.seq - 1);
      await this.delivery.fillFromStore(event.seq - 1);
      if (this.last! < event.seq - 1) this.delivery.report(this.last! + 1, event.seq - 1);
    }
    this.delivery.deliverBatched(event);
  }

  /**
   * Delivers stream seqs `from`..`to` (at most SKIPPED_MAX) by direct gets, in order, until one is
   * missing: messages a consumer skipped though the stream holds them. A pull with no acks can lose
   * the messages the server sent just as the client gave the pull up (its `expires` passed on a
   * loaded machine): seen once at load 25, an event missing for one replica's clients only.
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

  /**
   * Every second: observe the engine's head, keep the lag measured against it, and recover from a
   * stall (see the file's head). Never throws; never overlaps itself.
   */
  private async watchdog(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      const head = await this.observeHead();
      if (head !== null) this.lag.observe(head);
      const now = Date.now();
      if (this.last !== this.progress.seq) {
        this.progress = { seq: this.last, at: now };
        this.recoveries = 0;
      }
      const lag = this.lagStatus(now);
      // The event-age gauge must not freeze while the replica is behind: it is at least the lag.
      if ((lag.events ?? 0) > 0 || lag.behind) this.options.metrics.lagSeconds.set(Math.max(lag.seconds, this.eventAge(now)));
      if (lag.behind && !this.reportedBehind) {
        this.reportedBehind = true;
        this.options.logger.warn({ position: this.last, engineHead: lag.engineHead, behindEvents: lag.events, behindSeconds: lag.seconds }, 'JetStream source: behind the engine');
      } else if (!lag.behind && this.reportedBehind && (lag.events ?? 0) === 0) {
        this.reportedBehind = false;
        this.options.logger.warn({ position: this.last, engineHead: lag.engineHead }, 'JetStream source: caught up with the engine again');
      }
      if (lag.stalled && now - this.lastRecovery >= (this.options.stallMs ?? STALL_MS)) {
        this.lastRecovery = now;
        await this.recover(lag);
      }
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'JetStream source: watchdog failed');
    } finally {
      this.polling = false;
    }
  }

  private eventAge(now: number): number {
    const ts = Date.parse(this.delivery.lastEvent?.ts ?? '');
    return Number.isFinite(ts) ? Math.max(0, (now - ts) / 1000) : 0;
  }

  /** The engine's head: the engine itself, else what the stream holds (each bounded in time). */
  private async observeHead(): Promise<number | null> {
    const timeout = <T>(p: Promise<T>, ms: number): Promise<T | null> =>
      Promise.race([p.catch(() => null), new Promise<null>((r) => setTimeout(() => r(null), ms).unref())]);
    const fromEngine = this.options.engineHead ? await timeout(this.options.engineHead(), 1_500) : null;
    if (fromEngine !== null) return fromEngine;
    const nc = this.nc;
    if (!nc || nc.isClosed() || !this.connectedNow) return null;
    const tail = await timeout(
      nc.jetstreamManager({ timeout: 1_500, checkAPI: false }).then((jsm) => streamTail(jsm, this.options.stream)),
      1_500,
    );
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
      { position: this.last, engineHead: lag.engineHead, behindEvents: lag.events, behindSeconds: lag.seconds, consuming: this.messages !== null },
      'JetStream source: stalled behind the engine; making a new consumer from the position',
    );
    this.options.metrics.reconnects.inc();
    // Still stalled at the second attempt in a row: the server this connection is on may be the
    // problem without having closed the socket (paused, half-partitioned; pings take seconds to
    // tell). It is left for another server of the cluster if it does not answer for the stream;
    // one that answers is kept (leaving it would only cut the requests in flight on it).
    if (++this.recoveries >= 2 && this.nc && !this.nc.isClosed()) {
      this.recoveries = 0;
      void this.leaveIfSilent(this.nc);
    }
    // A direct reading under way is left to run its course (it ends by itself after DIRECT_READ_MS):
    // ending it here cut readings whose first gets were still waiting on a paused server.
    if (!this.reading) {
      this.renew = true;
      this.messages?.stop();
      this.pause.wake();
    }
    if (this.options.fillFrom && this.last !== null && lag.engineHead !== null) {
      const head = lag.engineHead;
      await this.serially(() => this.delivery.fillFromStore(head));
    }
  }
}
