// The fan-out: frames in (from the live runtime), serialised once, written to every matching
// client; replay from history on connect; pings; close on shutdown.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Frame } from '../projections/types.js';
import { serializeFrame } from './serialize.js';
import { StreamClient, wireFrame } from './client.js';
import type { StreamFanout } from './fanout.js';
import { History, type Sent } from './history.js';
import { SubscriberIndex } from './registry.js';
import { applyRule1, matches, rule1Ignores, type Subscription } from './subscription.js';

/** What the hub counts (StreamMetrics in the gateway process; deltas reported by a fan-out worker). */
export interface HubMetrics {
  clients: { set(n: number): void };
  sent(kind: string, n: number): void;
  slowCloses: { inc(): void };
  framesDropped: { inc(labels: { kind: string }): void };
}

export interface HubLogger {
  warn(obj: object, msg: string): void;
}

export interface HubOptions {
  /** false without ENGINE_ADMIN_TOKEN: clients connect and receive nothing, control messages included. */
  enabled: boolean;
  bufferBytes: number;
  pingMs: number;
  historySize: number;
  metrics: HubMetrics;
  logger: HubLogger;
}

export const GOING_AWAY = 1001;

export class StreamHub implements StreamFanout {
  private readonly index = new SubscriberIndex();
  private readonly history: History;
  private pingTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Clients corked during the current batch (null: not batching). */
  private batch: StreamClient[] | null = null;
  /** The engine's markets as last loaded (rule 1); null while not known. */
  private known: ReadonlySet<string> | null = null;

  /** Completes handshakes (noServer: the HTTP server's 'upgrade' event hands the sockets over). */
  private wss: WebSocketServer | null = null;

  constructor(private readonly options: HubOptions) {
    this.history = new History(options.historySize);
  }

  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription): void {
    this.wss ??= new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: 4096 });
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', () => {}); // clients have nothing to say; filters are fixed per connection
      this.add(ws, sub);
    });
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

  /** The engine's history was replaced: the replay history restarts after `seq` (the new head). */
  resetHistory(seq: number): void {
    this.history.reset(seq);
  }

  /**
   * The engine's market list was loaded or changed: rule 1 is judged again for every connection
   * (a filter kept while the list was unknown, and matching nothing, is now ignored; one that was
   * ignored and now names a listed market applies again). A changed connection moves in the index;
   * one that asked for control messages is sent `stream.subscribed` again with the new filters.
   */
  setKnownMarkets(known: ReadonlySet<string> | null): void {
    this.known = known;
    if (known === null) return;
    for (const client of [...this.index.clients()]) {
      const sub = client.sub;
      if (rule1Ignores(sub.requestedMarkets, known) === sub.marketsIgnored) continue;
      this.index.remove(client); // the index finds the buckets through the filters: out before they change
      applyRule1(sub, known);
      this.index.add(client);
      if (this.options.enabled && sub.control) this.sendControl(client, subscribedMessage(sub));
    }
  }

  /**
   * Registers a connection. Replay (when `since` is given) and registration happen in the same
   * synchronous step as any publish, so the client sees history then live with no gap or repeat.
   */
  add(ws: WebSocket, sub: Subscription): StreamClient {
    const client = new StreamClient(ws, sub, this.options.bufferBytes);
    ws.on('pong', (data) => client.onPong(data));
    ws.on('close', () => this.remove(client));
    ws.on('error', () => ws.terminate());
    this.ensurePing();
    if (this.closed) {
      client.close(GOING_AWAY, 'gateway shutting down');
      return client;
    }
    // The market list may have been loaded while the upgrade was being authorised.
    if (this.known !== null) applyRule1(sub, this.known);
    this.index.add(client);
    this.options.metrics.clients.set(this.index.size);
    if (!this.options.enabled) return client;

    // Control messages are not spec §6 kinds: only for connections that opted in (control=true or since).
    if (sub.control) this.sendControl(client, subscribedMessage(sub));
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

  /** Only to connections with `sub.control` (since implies it). */
  private sendControl(client: StreamClient, message: Record<string, unknown>): void {
    client.send(Buffer.from(JSON.stringify(message)));
  }

  remove(client: StreamClient): void {
    this.index.remove(client);
    this.options.metrics.clients.set(this.index.size);
  }

  /** Sends one frame to every matching client; the JSON is made once. */
  publish(frame: Frame): void {
    this.publishSerialized(frame, Buffer.from(serializeFrame(frame)));
  }

  /** As publish, with the frame's JSON already made (a fan-out worker gets it from the gateway process). */
  publishSerialized(frame: Frame, data: Buffer): void {
    const sent: Sent = { frame, data };
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
      client.ping();
    }
  }

  /** Shutdown: every client gets close code 1001; new connections are refused. */
  async closeAll(): Promise<void> {
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

  /** Nothing outlives closeAll in this process. */
  async stop(): Promise<void> {}
}

function subscribedMessage(sub: Subscription): Record<string, unknown> {
  return {
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
  };
}
