// The relay: reads the engine's admin SSE once (the gateway's own SseBridge: resume with
// Last-Event-ID, silence watchdog, gap filling from the indexer's `events` table) and publishes
// every engine event to JetStream, in seq order, with the engine seq as `Nats-Msg-Id`.
//
// No seq lost or repeated, with any number of relays running, on one server or a cluster:
// - each publish expects the stream's last STREAM seq to be the one before it
//   (`Nats-Expected-Last-Sequence`), so the stream stays contiguous and in engine order whichever
//   relay publishes. (It expected the last message id before: the server keeps that id only in
//   memory, so after a server restart or a leader change it no longer matched anything and every
//   publish failed "wrong last msg id" for ever, ADR 0120. The stream seq is the stream's own,
//   replicated state.)
// - a publish refused because the stream moved (another relay stored that seq, or a new leader
//   holds less than the old one: a rolled-back tail) realigns on what the stream holds: it reads
//   the stream's last message and its engine seq. At or past this event: drop what is stored and
//   go on. Behind it: the reader restarts after the stream's last engine seq and the engine
//   replays what is missing, republished with the same ids (deduplicated within the window).
// - after any NATS failure the relay stops its SSE reader and starts again after the stream's last
//   engine seq (the resume point is always the stream, never the relay's memory). Its retries wait
//   at most 500 ms, and not at all once the cluster announces a new stream leader
//   (src/fleet/leader-elections.ts): the publishes resume with the election, not after it.
//
// An event longer than SSE_MAX_EVENT_BYTES never stalls it: the bridge takes it from the database
// or skips it (src/engine/sse-bridge.ts), and the relay publishes only events within the bound
// (a longer one, from the database, is left out of the stream: JetStream would refuse a message
// over its max_payload, and a replica would meet it on every restart). Left out, it is a hole in
// the stream's engine seqs, which a replica fills from the database or reports, as any gap.
//
// Engine history replaced (the bridge tells its sink `replaced`: the engine restarted below the resume point): the
// relay purges the stream, so it holds one history; replicas see an engine seq going back and reset.
import type { FastifyBaseLogger } from 'fastify';
import { type JetStreamClient, type JetStreamManager, type NatsConnection } from 'nats';
import { Counter, Gauge, type Registry } from 'prom-client';
import { DEFAULT_MAX_EVENT_BYTES, SseBridge } from '../engine/sse-bridge.js';
import { WakeableSleep } from '../engine/ordered-delivery.js';
import { watchLeaderElections } from '../fleet/leader-elections.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import { connectNats, ensureStream, streamTailAnyhow, type StreamSettings } from '../fleet/jetstream.js';

export interface RelayOptions extends StreamSettings {
  engineStreamUrl: string;
  token: string;
  idleMs: number;
  /** SSE_MAX_EVENT_BYTES: the bridge drops a connection sending a longer line or event. */
  maxEventBytes?: number;
  /** Where to start when the stream is empty (the indexer's newest seq, or null: the engine's head). */
  emptyStreamStartAfter: () => Promise<number | null>;
  fillFrom: ((after: number, limit: number) => Promise<EngineEvent[]>) | null;
  engineHead?: () => Promise<number | null>;
  logger: FastifyBaseLogger;
  registry: Registry;
  name?: string;
}

const encoder = new TextEncoder();
/** Publishes in flight at once. */
const PIPELINE = 256;

export class EngineRelay {
  private nc: NatsConnection | null = null;
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private bridge: SseBridge | null = null;
  /** Engine events read from SSE, waiting to be published (in order). */
  private queue: EngineEvent[] = [];
  private pumping = false;
  private stopped = false;
  private restarting: Promise<void> | null = null;
  /** The newest engine seq known to be in the stream (published by us or by another relay). */
  private streamLast: number | null = null;
  /** The stream seq of that message: what the next publish expects as the stream's last. */
  private streamSeq = 0;
  /**
   * Engine seqs this relay left out on purpose (longer than SSE_MAX_EVENT_BYTES, or skipped by its
   * reader past an unfillable gap): never in the stream, so a hole made of them is no rollback.
   * Replicas fill them from the database or announce them (src/engine/ordered-delivery.ts).
   */
  private readonly leftOut = new LeftOut();
  private readonly published: Counter<'outcome'>;
  private readonly lastSeq: Gauge;
  private readonly realigned: Counter<'cause'>;
  private readonly replicas: Gauge;
  private replicaCheck: NodeJS.Timeout | null = null;
  /** Restarts since the last event stored: two in a row move the connection to another server. */
  private failedRestarts = 0;
  /** The pauses between retries, ended early by a new stream leader. */
  private readonly retryPause = new WakeableSleep();

  constructor(private readonly options: RelayOptions) {
    const registers = [options.registry];
    this.published = new Counter({
      name: 'bff_relay_events_total',
      help: 'Engine events handled by the relay: published, already in the stream (another relay stored them), or too_large (longer than SSE_MAX_EVENT_BYTES, left out)',
      labelNames: ['outcome'],
      registers,
    });
    this.lastSeq = new Gauge({ name: 'bff_relay_stream_last_seq', help: 'Newest engine seq known to be in the JetStream stream', registers });
    this.realigned = new Counter({
      name: 'bff_relay_realigned_total',
      help: 'Times the relay realigned on the stream: another relay was ahead (ahead), or the stream held less than expected (rolled_back: a new leader without the tail; the engine replays it)',
      labelNames: ['cause'],
      registers,
    });
    this.replicas = new Gauge({
      name: 'bff_relay_stream_replicas',
      help: 'The running stream\'s replica count (num_replicas), as the cluster reports it; compare with NATS_STREAM_REPLICAS',
      registers,
    });
    // Read at each scrape: what /readyz answers, so an alert can tell "scraped" from "relaying".
    const ready = (): number => (this.connected ? 1 : 0);
    new Gauge({
      name: 'bff_relay_ready',
      help: '1 when this relay is ready (NATS and the engine SSE both connected, as its /readyz), else 0',
      registers,
      collect() {
        this.set(ready());
      },
    });
  }

  get streamLastSeq(): number | null {
    return this.streamLast;
  }

  get connected(): boolean {
    return this.bridge?.connected === true && this.nc !== null && !this.nc.isClosed();
  }

  async start(): Promise<void> {
    const nc = await connectNats(this.options.url, this.options.name ?? 'engine-relay');
    try {
      // 2 s per call (the client's default is 5): a publish lost with a dead leader is retried
      // from the stream sooner, and an election (a few seconds) is waited out by retrying.
      this.jsm = await nc.jetstreamManager({ timeout: 2_000 });
      this.js = nc.jetstream({ timeout: 2_000 });
      const ensured = await ensureStream(this.jsm, this.options);
      this.reportReplicas(ensured.replicas);
      this.nc = nc;
      watchLeaderElections(nc, this.options.stream, (leader) => {
        this.options.logger.info({ leader }, 'relay: new stream leader');
        this.failedRestarts = 0; // the next failure is on the new leader: no reason to leave this server yet
        this.retryPause.wake();
      });
      await this.startBridge();
      // The count can change under a running relay (an operator's `nats stream edit`): read again each minute.
      this.replicaCheck = setInterval(() => {
        this.jsm!.streams.info(this.options.stream).then(
          (info) => this.reportReplicas(info.config.num_replicas),
          () => undefined,
        );
      }, 60_000);
      this.replicaCheck.unref();
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  private reportedReplicas: number | null = null;

  /** The stream's replica count as a metric, and a warning when it is not the configured one. */
  private reportReplicas(n: number): void {
    this.replicas.set(n);
    const wanted = this.options.replicas ?? 1;
    if (n !== wanted && this.reportedReplicas !== n) {
      this.options.logger.warn(
        { stream: this.options.stream, replicas: n, configured: wanted },
        `relay: the stream has ${n} replica(s), NATS_STREAM_REPLICAS is ${wanted}; it is left as it is (change it with \`nats stream edit --replicas\`, docs/operations.md)`,
      );
    }
    this.reportedReplicas = n;
  }

  private async startBridge(): Promise<void> {
    const tail = await this.streamTail();
    const startAfter = tail.lastEngineSeq ?? (await this.options.emptyStreamStartAfter());
    this.streamLast = tail.lastEngineSeq;
    this.streamSeq = tail.lastStreamSeq;
    if (this.streamLast !== null) this.lastSeq.set(this.streamLast);
    this.queue = [];
    this.options.logger.info({ startAfter, stream: this.options.stream }, 'relay: reading the engine stream');
    const bridge = new SseBridge({
      url: this.options.engineStreamUrl,
      token: this.options.token,
      idleMs: this.options.idleMs,
      ...(this.options.maxEventBytes !== undefined ? { maxEventBytes: this.options.maxEventBytes } : {}),
      sink: {
        events: (batch) => {
          for (const e of batch) {
            if (this.tooLarge(e)) this.leftOut.add(e.seq, e.seq);
            else this.queue.push(e);
          }
          void this.pump();
        },
        skipped: (to, from) => this.leftOut.add(from ?? to, to),
        // The purge is not awaited: the queue is emptied, and the next event is published after it.
        replaced: async () => {
          this.queue = [];
          void this.purge();
        },
      },
      fillFrom: this.options.fillFrom,
      engineHead: this.options.engineHead,
      logger: this.options.logger,
      metrics: { reconnects: { inc() {} }, lagSeconds: { set() {} }, maxSeq: { set() {} }, events: { inc() {} } },
    });
    this.bridge = bridge;
    bridge.start(startAfter);
  }

  /** An event above the bound (from the database): counted, logged, left out of the stream. */
  private tooLarge(e: EngineEvent): boolean {
    const limit = this.options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    const size = Buffer.byteLength(e.raw ?? JSON.stringify(e));
    if (size <= limit) return false;
    this.published.inc({ outcome: 'too_large' });
    this.options.logger.error({ seq: e.seq, size, limit }, 'relay: event longer than SSE_MAX_EVENT_BYTES left out of the stream (replicas fill it from the database)');
    return true;
  }

  private async purge(): Promise<void> {
    try {
      await this.jsm!.streams.purge(this.options.stream);
      this.streamLast = null;
      this.options.logger.warn('relay: engine history replaced; stream purged');
    } catch (err) {
      this.options.logger.error({ err: (err as Error).message }, 'relay: could not purge the stream');
    }
  }

  /**
   * Publishes the queue in order, up to PIPELINE messages in flight: each expects the one before it
   * as the stream's last id, and NATS applies one connection's publishes in order, so a pipelined
   * batch is as safe as one publish at a time, without a round trip per event.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    let idle = 0;
    try {
      while (!this.stopped && this.queue.length > 0 && this.restarting === null) {
        const batch = this.queue.slice(0, PIPELINE);
        const done = await this.publishBatch(batch);
        this.queue.splice(0, done);
        // Realigned without progress (the stream moved under us): a short pause, not a hot loop.
        idle = done === 0 ? idle + 1 : 0;
        if (idle > 0) await this.retryPause.sleep(Math.min(1_000, 20 * 2 ** Math.min(idle, 6)));
      }
    } catch (err) {
      if (!this.stopped) {
        this.options.logger.warn({ err: (err as Error).message }, 'relay: publish failed; restarting from the stream');
        this.restart();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** How many events of `batch` are settled (stored by this relay or found in the stream). */
  private async publishBatch(batch: EngineEvent[]): Promise<number> {
    let expectedEngine = this.streamLast;
    let expectedSeq = this.streamSeq;
    const sends = batch.map((event) => {
      if (expectedEngine !== null && event.seq <= expectedEngine) return null; // already in the stream
      if (expectedEngine !== null && event.seq !== expectedEngine + 1 && !this.leftOut.covers(expectedEngine + 1, event.seq - 1)) return 'hole' as const;
      const p = this.js!.publish(this.options.subject, encoder.encode(event.raw ?? JSON.stringify(event)), {
        msgID: String(event.seq),
        // 0 (a new stream) is no condition for the client: the id's deduplication covers that first write.
        expect: { lastSequence: expectedSeq },
      });
      expectedEngine = event.seq;
      expectedSeq++;
      return p;
    });
    const results = await Promise.allSettled(sends.map((p) => (p === null || p === 'hole' ? Promise.resolve(null) : p)));
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i]!;
      const r = results[i]!;
      const send = sends[i];
      if (send === null) {
        this.published.inc({ outcome: 'already_stored' });
        continue;
      }
      if (send === 'hole') return this.realign(event);
      if (r.status === 'fulfilled' && r.value && !r.value.duplicate) {
        this.published.inc({ outcome: 'published' });
        this.failedRestarts = 0;
        this.streamLast = event.seq;
        this.streamSeq = r.value.seq;
        this.lastSeq.set(event.seq);
        continue;
      }
      // A duplicate (this id is stored: another relay, or a retry after a lost ack), or a refusal
      // because the stream's last seq is not the one expected: what the stream holds decides.
      if (r.status === 'rejected' && !/wrong last sequence/i.test((r.reason as Error).message)) throw r.reason;
      return this.realign(event);
    }
    return batch.length;
  }

  /**
   * Reads the stream's last message and continues from it: returns how many queued events are
   * settled (0: the queue is evaluated again against the new last seq), or throws (the reader
   * restarts after the stream's last seq) when the stream ends before `event`'s predecessor.
   */
  private async realign(event: EngineEvent): Promise<number> {
    const tail = await this.streamTail();
    const last = tail.lastEngineSeq;
    if (last !== null && last < event.seq - 1 && !this.leftOut.covers(last + 1, event.seq - 1)) {
      this.realigned.inc({ cause: 'rolled_back' });
      this.options.logger.warn({ streamLast: last, relayLast: this.streamLast, next: event.seq }, 'relay: the stream holds less than expected (a new leader without the tail); republishing from the engine');
      throw new Error(`stream ends at ${last}, before ${event.seq - 1}`);
    }
    if (last !== null && last >= event.seq) this.realigned.inc({ cause: 'ahead' });
    this.streamLast = last;
    this.streamSeq = tail.lastStreamSeq;
    if (last !== null) this.lastSeq.set(last);
    return 0;
  }

  /** The stream's last message (a direct get while the cluster has no meta leader to answer stream infos). */
  private streamTail(): Promise<{ lastStreamSeq: number; lastEngineSeq: number | null }> {
    return streamTailAnyhow(this.nc!, this.jsm!, this.options.stream, this.options.subject);
  }

  /** Stops reading, then starts again after the stream's last seq once NATS answers. */
  private restart(): void {
    if (this.restarting) return;
    this.restarting = (async () => {
      await this.bridge?.stop();
      this.bridge = null;
      // A publish that failed twice in a row on the same server, or a stream that does not answer
      // twice: the server may be paused or half-partitioned with its socket still open (pings take
      // seconds to tell), so the connection moves to another server of the cluster.
      if (++this.failedRestarts >= 2) this.moveServer();
      for (let attempt = 1; !this.stopped; attempt++) {
        try {
          await this.startBridge();
          break;
        } catch (err) {
          this.options.logger.warn({ err: (err as Error).message, server: this.nc?.info?.server_name }, 'relay: stream unavailable; retrying');
          if (attempt % 2 === 0) this.moveServer();
          await this.retryPause.sleep(500);
        }
      }
    })().finally(() => {
      this.restarting = null;
      void this.pump();
    });
  }

  private moveServer(): void {
    this.failedRestarts = 0;
    if (!this.nc || this.nc.isClosed()) return;
    this.options.logger.warn({ server: this.nc.info?.server_name }, 'relay: moving to another NATS server');
    void this.nc.reconnect().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retryPause.wake();
    if (this.replicaCheck) clearInterval(this.replicaCheck);
    await this.bridge?.stop();
    await this.restarting;
    await this.nc?.drain().catch(() => undefined);
  }
}

/** Ranges of engine seqs left out of the stream, the newest MAX_LEFT_OUT kept (older ones are long settled). */
class LeftOut {
  private static readonly MAX = 1_000;
  private readonly ranges: Array<[number, number]> = [];

  add(from: number, to: number): void {
    this.ranges.push([from, to]);
    if (this.ranges.length > LeftOut.MAX) this.ranges.shift();
  }

  /** Every seq of from..to was left out (an empty range is covered). */
  covers(from: number, to: number): boolean {
    let next = from;
    for (const [a, b] of [...this.ranges].sort((x, y) => x[0] - y[0])) {
      if (a > next) break;
      if (b >= next) next = b + 1;
      if (next > to) return true;
    }
    return next > to;
  }
}
