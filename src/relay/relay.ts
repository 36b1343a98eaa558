// The relay: reads the engine's admin SSE once (the gateway's own SseBridge: resume with
// Last-Event-ID, silence watchdog, gap filling from the indexer's `events` table) and publishes
// every engine event to JetStream, in seq order, with the engine seq as `Nats-Msg-Id`.
//
// No seq lost or repeated, with any number of relays running:
// - each publish of seq N expects the stream's last message id to be N-1 (`Nats-Expected-Last-Msg-Id`),
//   so the stream stays contiguous and in engine order whichever relay publishes;
// - a relay whose publish is refused because another relay already stored that seq (duplicate
//   id, or a last id at or past N) drops the event and goes on; the active relay killed, the next
//   event a standby relay reads is the one the stream needs, so it takes over at once;
// - after any NATS failure the relay stops its SSE reader and starts again after the stream's last
//   engine seq (the resume point is always the stream, never the relay's memory).
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
import type { EngineEvent } from '../contracts/engine-event.js';
import { connectNats, ensureStream, streamBounds, type StreamSettings } from '../fleet/jetstream.js';

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
  private readonly published: Counter<'outcome'>;
  private readonly lastSeq: Gauge;

  constructor(private readonly options: RelayOptions) {
    const registers = [options.registry];
    this.published = new Counter({
      name: 'bff_relay_events_total',
      help: 'Engine events handled by the relay: published, already in the stream (another relay stored them), or too_large (longer than SSE_MAX_EVENT_BYTES, left out)',
      labelNames: ['outcome'],
      registers,
    });
    this.lastSeq = new Gauge({ name: 'bff_relay_stream_last_seq', help: 'Newest engine seq known to be in the JetStream stream', registers });
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
      this.jsm = await nc.jetstreamManager();
      this.js = nc.jetstream();
      await ensureStream(this.jsm, this.options);
      this.nc = nc;
      await this.startBridge();
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw err;
    }
  }

  private async startBridge(): Promise<void> {
    const bounds = await streamBounds(this.jsm!, this.options.stream);
    const startAfter = bounds ? bounds.lastEngineSeq : await this.options.emptyStreamStartAfter();
    this.streamLast = bounds ? bounds.lastEngineSeq : null;
    if (this.streamLast !== null) this.lastSeq.set(this.streamLast);
    this.queue = [];
    this.options.logger.info({ startAfter, stream: this.options.stream }, 'relay: reading the engine stream');
    const bridge = new SseBridge({
      url: this.options.engineStreamUrl,
      token: this.options.token,
      idleMs: this.options.idleMs,
      ...(this.options.maxEventBytes !== undefined ? { maxEventBytes: this.options.maxEventBytes } : {}),
      startAfter,
      sink: {
        event: (e) => {
          if (this.tooLarge(e)) return;
          this.queue.push(e);
          void this.pump();
        },
        batch: (deliver) => deliver(),
        skipped: () => {},
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
    bridge.start();
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
    try {
      while (!this.stopped && this.queue.length > 0 && this.restarting === null) {
        const batch = this.queue.slice(0, PIPELINE);
        const done = await this.publishBatch(batch);
        this.queue.splice(0, done);
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
    let expected = this.streamLast;
    const sends = batch.map((event) => {
      if (expected !== null && event.seq <= expected) return null; // already in the stream
      const p = this.js!.publish(this.options.subject, encoder.encode(event.raw ?? JSON.stringify(event)), {
        msgID: String(event.seq),
        ...(expected !== null ? { expect: { lastMsgID: String(expected) } } : {}),
      });
      expected = event.seq;
      return p;
    });
    const results = await Promise.allSettled(sends.map((p) => p ?? Promise.resolve(null)));
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i]!;
      const r = results[i]!;
      if (sends[i] === null) {
        this.published.inc({ outcome: 'already_stored' });
        continue;
      }
      if (r.status === 'fulfilled') {
        this.published.inc({ outcome: r.value?.duplicate ? 'already_stored' : 'published' });
        this.streamLast = event.seq;
        this.lastSeq.set(event.seq);
        continue;
      }
      const err = r.reason as Error;
      if (!/wrong last msg ?id/i.test(err.message)) throw err;
      // Another relay moved the stream on: catch up with it; the rest of the batch is tried again.
      const bounds = await streamBounds(this.jsm!, this.options.stream);
      const last = bounds?.lastEngineSeq ?? null;
      if (last === null || last < event.seq) throw err; // the stream is behind this event: resync
      this.streamLast = last;
      this.lastSeq.set(last);
      return i;
    }
    return batch.length;
  }

  /** Stops reading, then starts again after the stream's last seq once NATS answers. */
  private restart(): void {
    if (this.restarting) return;
    this.restarting = (async () => {
      await this.bridge?.stop();
      this.bridge = null;
      while (!this.stopped) {
        try {
          await this.startBridge();
          break;
        } catch (err) {
          this.options.logger.warn({ err: (err as Error).message }, 'relay: stream unavailable; retrying');
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })().finally(() => {
      this.restarting = null;
      void this.pump();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.bridge?.stop();
    await this.restarting;
    await this.nc?.drain().catch(() => undefined);
  }
}
