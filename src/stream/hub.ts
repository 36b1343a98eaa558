// The fan-out: frames in (from the live runtime), serialised once, written to every matching
// client; replay from history on connect; pings; close on shutdown.
import type WebSocket from 'ws';
import type { FastifyBaseLogger } from 'fastify';
import type { Frame } from '../projections/types.js';
import { serializeFrame } from './serialize.js';
import { StreamClient, wireFrame } from './client.js';
import { History, type Sent } from './history.js';
import type { StreamMetrics } from './metrics.js';
import { SubscriberIndex } from './registry.js';
import { matches, type Subscription } from './subscription.js';

export interface HubOptions {
  /** false without ENGINE_ADMIN_TOKEN: clients connect and receive nothing, control messages included. */
  enabled: boolean;
  bufferBytes: number;
  pingMs: number;
  historySize: number;
  metrics: StreamMetrics;
  logger: FastifyBaseLogger;
}

export const GOING_AWAY = 1001;

export class StreamHub {
  private readonly index = new SubscriberIndex();
  private readonly history: History;
  private pingTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Clients corked during the current batch (null: not batching). */
  private batch: StreamClient[] | null = null;

  constructor(private readonly options: HubOptions) {
    this.history = new History(options.historySize);
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  get size(): number {
    return this.index.size;
  }

  /** Lets the history answer `since` requests from the bridge's start point, and past unfilled gaps. */
  markCoveredAfter(seq: number): void {
    this.history.markCoveredAfter(seq);
  }

  /**
   * Registers a connection. Replay (when `since` is given) and registration happen in the same
   * synchronous step as any publish, so the client sees history then live with no gap or repeat.
   */
  add(ws: WebSocket, sub: Subscription): StreamClient {
    const client = new StreamClient(ws, sub, this.options.bufferBytes);
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('close', () => this.remove(client));
    ws.on('error', () => ws.terminate());
    this.ensurePing();
    if (this.closed) {
      client.close(GOING_AWAY, 'gateway shutting down');
      return client;
    }
    this.index.add(client);
    this.options.metrics.clients.set(this.index.size);
    if (!this.options.enabled) return client;

    this.sendControl(client, {
      kind: 'stream.subscribed',
      ts: new Date().toISOString(),
      payload: {
        kinds: sub.kinds ? [...sub.kinds] : null,
        markets: sub.markets ? [...sub.markets] : null,
        marketsIgnored: sub.marketsIgnored,
        intervals: sub.intervals ? [...sub.intervals] : null,
        parties: [...sub.parties],
        since: sub.since,
      },
    });
    if (sub.since !== null) this.batched(() => this.replay(client, sub.since!));
    return client;
  }

  private replay(client: StreamClient, since: number): void {
    const covered = this.history.coveredAfter;
    if (covered === null || since < covered) {
      this.sendControl(client, {
        kind: 'stream.gap',
        ts: new Date().toISOString(),
        payload: { requestedSince: since, oldestAvailableSeq: covered === null ? null : covered + 1, backfill: `/v1/events?since=${since}` },
      });
    }
    for (const sent of this.history.after(since)) {
      if (!matches(client.sub, sent.frame)) continue;
      if (!this.deliver(client, sent)) return;
    }
  }

  private sendControl(client: StreamClient, message: Record<string, unknown>): void {
    client.send(Buffer.from(JSON.stringify(message)));
  }

  remove(client: StreamClient): void {
    this.index.remove(client);
    this.options.metrics.clients.set(this.index.size);
  }

  /** Sends one frame to every matching client; the JSON is made once. */
  publish(frame: Frame): void {
    const sent: Sent = { frame, data: Buffer.from(serializeFrame(frame)) };
    this.history.push(sent);
    let n = 0;
    this.index.forEachRecipient(frame, (client) => {
      if (this.deliver(client, sent)) n++;
    });
    this.options.metrics.sent(frame.kind, n);
  }

  publishAll(frames: readonly Frame[]): void {
    for (const f of frames) this.publish(f);
  }

  /**
   * Runs `fn` (which publishes) with every recipient's socket corked, then uncorks them all: the
   * frames of one SSE chunk reach each client in one write instead of one write per frame.
   */
  batched(fn: () => void): void {
    if (this.batch) return fn();
    const batch: StreamClient[] = [];
    this.batch = batch;
    try {
      fn();
    } finally {
      this.batch = null;
      for (const c of batch) c.uncork();
    }
  }

  /** true when written; a client past its bound is closed with 4008 (and unregistered at once). */
  private deliver(client: StreamClient, sent: Sent): boolean {
    if (this.batch && !client.corked && !client.closing) {
      client.cork();
      if (client.corked) this.batch.push(client);
    }
    sent.wire ??= wireFrame(sent.data);
    const r = client.send(sent.data, sent.wire);
    if (r === 'sent') return true;
    if (r === 'slow') {
      this.index.remove(client);
      this.options.metrics.clients.set(this.index.size);
      this.options.metrics.slowCloses.inc();
      this.options.metrics.framesDropped.inc({ kind: sent.frame.kind });
      this.options.logger.warn({ kind: sent.frame.kind, seq: sent.frame.seq }, 'stream client too slow: closed with 4008');
      client.closeSlow();
    }
    return false;
  }

  private ensurePing(): void {
    if (this.pingTimer || this.closed) return;
    this.pingTimer = setInterval(() => this.pingAll(), this.options.pingMs);
    this.pingTimer.unref();
  }

  /** A peer that did not answer the previous ping is dropped. */
  private pingAll(): void {
    for (const client of this.index.clients()) {
      if (!client.alive) {
        this.remove(client);
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
  }

  /** Shutdown: every client gets close code 1001; new connections are refused. */
  closeAll(): void {
    this.closed = true;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    for (const client of [...this.index.clients()]) {
      this.remove(client);
      client.close(GOING_AWAY, 'gateway shutting down');
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
