// The hub: the index of open connections and the broadcast (FramePublisher,
// src/contracts/frame-publisher.ts). Frames in (from the live runtime and the order book poller),
// serialised once, written to every matching connection, one write per batch, a slow consumer closed
// with 4008; control messages to open connections (resets, epoch, rule 1 again, heartbeats);
// liveness pings; close on shutdown. The opening of each new connection (replay, snapshot, held
// frames) is ConnectionOpener's (opening.ts).
import { repeatOn, systemClock, type Clock, type Repeating } from '../contracts/clock.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { DEFAULT_INBOUND_LIMITS, hardMaxBytes, limitInbound, type AddressInbound, type InboundLimits } from './inbound-limit.js';
import { LoopStalls } from './loop-stalls.js';
import type { Frame } from '../contracts/frame.js';
import { serializeFrame } from './serialize.js';
import { framedText } from './framed-text.js';
import { pingFrame, StreamClient, type ClientMessageHandlers, type ClientOwner, type Ping } from './client.js';
import { control, json, subscribedMessage, type ResetReason } from './control.js';
import type { StreamFanout } from './fanout.js';
import { History, type Sent } from './history.js';
import { ConnectionOpener, type StreamStateSource } from './opening.js';
import { SubscriberIndex } from './registry.js';
import { judgeMarketsFilter, marketsFilterMatchesNothing, matches, type Subscription } from './subscription.js';
import type { SnapshotParts } from './snapshot.js';
import { EMPTY_EPOCH } from './epoch.js';
import { FramePath } from './frame-path.js';
import { GOING_AWAY, INTERNAL_ERROR, STREAM_RESET } from './close-codes.js';

/** What the hub counts (StreamMetrics). */
export interface HubMetrics {
  clients: { set(n: number): void };
  sent(kind: string, n: number): void;
  slowCloses: { inc(): void };
  framesDropped: { inc(labels: { kind: string }): void };
  /** Clients closed 1008 for sending past the message rate. */
  floodCloses?: { inc(): void };
  /** Open connections with permessage-deflate negotiated. */
  deflateConnections?: { inc(): void; dec(): void };
}

/**
 * permessage-deflate for the connections that ask for it (`compress=deflate`), bounded per
 * connection: no context kept between messages (each frame compressed alone, so nothing grows with
 * the connection's age), a 1 KiB window and memLevel 4. The gateway's messages are compressed once
 * per frame for every deflate connection and written to their sockets (deflate-frame.ts, ADR 0367),
 * so a connection holds no compression state of its own (with Node 24's zlib, ~90–100 KiB each
 * when ws compressed per connection); reading a client's compressed messages keeps ws's inflate
 * state (docs/stream.md "Compression"). How many deflate connections an address holds is bounded
 * at the upgrade (WS_DEFLATE_CONNECTIONS_PER_IP, ADR 0366).
 */
export interface DeflateSettings {
  thresholdBytes: number;
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
  /** Without it (a hub with no runtime): epoch "empty", head = the last seq published, no snapshot. */
  state?: StreamStateSource;
  /** What a client may send (src/stream/inbound-limit.ts); default DEFAULT_INBOUND_LIMITS. */
  inbound?: InboundLimits;
  /** permessage-deflate for connections that ask (null/absent: never negotiated). */
  deflate?: DeflateSettings | null;
  /**
   * Told of every registered connection's filters as they change: `before` null when it opens,
   * `after` null when it closes (the account book counts the parties connections need). Called
   * before the snapshot of the new filters is read.
   */
  watch?: (before: Subscription | null, after: Subscription | null) => void;
  /** The pings' and the closing connections' timers (default systemClock). */
  clock?: Clock;
}

export type { ClientMessageHandlers } from './client.js';

/** The `opening` of every connection once live (a settled promise, the same for all). */
const OPENED: Promise<boolean> = Promise.resolve(true);
/**
 * zlib's output buffer of a connection's compression stream (its default is 16 KiB, kept for the
 * connection's life): the gateway's frames are mostly far smaller.
 */
const DEFLATE_CHUNK_BYTES = 4_096;
/** Liveness pings of one period go out in this many slices (StreamHub.ensurePing). */
const PING_SLICES = 10;
export class StreamHub implements StreamFanout, ClientOwner {
  private readonly index = new SubscriberIndex();
  private readonly history: History;
  private pingTimer: Repeating | null = null;
  private closed = false;
  /** The current batch: its tree of frame paths and the clients with frames pending (null: not batching). */
  private batch: { root: FramePath; clients: StreamClient[] } | null = null;
  /** The engine's markets as last loaded (rule 1); null while not known. */
  private known: ReadonlySet<string> | null = null;

  /** Completes handshakes (noServer: the HTTP server's 'upgrade' event hands the sockets over). */
  private wss: WebSocketServer | null = null;
  private wssDeflate: WebSocketServer | null = null;
  private readonly state: StreamStateSource;
  private readonly opener: ConnectionOpener;
  private lastSeq: number | null = null;
  /** The slice of connections the next ping tick pings, and the slice the next connection joins. */
  private pingTick = 0;
  private nextPingSlot = 0;

  private readonly clock: Clock;
  /** How long the loop was held, credited by every connection's message rate bound (ADR 0381). */
  private readonly stalls: LoopStalls;

  constructor(private readonly options: HubOptions) {
    this.clock = options.clock ?? systemClock;
    this.stalls = new LoopStalls(this.clock);
    this.history = new History(options.historySize);
    this.state = options.state ?? {
      epoch: () => EMPTY_EPOCH,
      ready: () => true,
      whenReady: () => Promise.resolve(),
      head: () => this.lastSeq,
      snapshot: () => ({ frames: [], later: null }),
    };
    this.opener = new ConnectionOpener({ state: this.state, history: this.history, bufferBytes: options.bufferBytes });
  }

  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription, handlers?: ClientMessageHandlers, tooLarge?: () => void, address?: AddressInbound | null): void {
    const inbound = this.options.inbound ?? DEFAULT_INBOUND_LIMITS;
    const deflate = sub.compress && this.options.deflate ? this.options.deflate : null;
    const wss = deflate
      ? (this.wssDeflate ??= this.deflateServer(deflate, inbound.maxBytes))
      : (this.wss ??= new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: hardMaxBytes(inbound), autoPong: false }));
    wss.handleUpgrade(req, socket, head, (ws) => {
      const client = this.add(ws, sub);
      if (ws.extensions.includes('permessage-deflate')) {
        const gauge = this.options.metrics.deflateConnections;
        gauge?.inc();
        // Only on deflate connections: a plain one's oversize message is not inflated, so costs nothing to speak of.
        if (tooLarge) client.tooLarge = tooLarge;
        ws.once('close', () => gauge?.dec());
      }
      // Every client message passes the size and rate bound first; without handlers (a hub used
      // alone) what passes is dropped.
      client.handlers = handlers ?? null;
      this.stalls.start();
      limitInbound(ws, inbound, client, this.stalls, address ?? null);
    });
  }

  /** A client sent past its message rate (it is being closed with 1008). */
  flooded(): void {
    this.options.metrics.floodCloses?.inc();
  }

  /** A write to the client outside the hub's frames (the pong to its ping) would pass its bound. */
  tooSlow(client: StreamClient, kind: string): void {
    this.closeSlow(client, { kind, seq: 0 });
  }

  /**
   * The deflate connections' server. A client's compressed message is inflated on the process-wide
   * zlib pool, which every deflate connection's messages share both ways: `maxPayload` is the
   * message bound itself (WS_CLIENT_MESSAGE_MAX_BYTES), so ws stops inflating a message the moment
   * it passes the bound and closes the connection 1009 (a bomb of a few bytes inflating to 250 KB
   * costs the pool one bound's worth, once per connection), where a plain connection's oversize
   * message up to hardMaxBytes is read and answered `payload_too_large`. Pings and pongs never
   * wait for the pool (client.ts writes them to the socket).
   */
  private deflateServer(settings: DeflateSettings, maxPayload: number): WebSocketServer {
    return new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload,
      // The client's pings are answered by StreamClient.onPing, within the slow-consumer bound.
      autoPong: false,
      perMessageDeflate: {
        threshold: settings.thresholdBytes,
        serverNoContextTakeover: true,
        clientNoContextTakeover: true,
        serverMaxWindowBits: 10,
        // No clientMaxWindowBits: as a number ws refuses (400) every offer that does not propose
        // a client window, so inflating a client's messages keeps the window it chose (up to 32 KiB).
        // Inflating keeps zlib's 16 KiB output buffer: a smaller one makes a message inflating to the
        // bound take more trips between the thread pool and the event loop, which a bomb multiplies.
        zlibDeflateOptions: { memLevel: 4, level: 6, chunkSize: DEFLATE_CHUNK_BYTES },
        // Compression runs on the thread pool: at most this many at once for the whole process.
        concurrencyLimit: 4,
      },
    });
  }

  head(): number | null {
    return this.state.head();
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  get size(): number {
    return this.index.size;
  }

  /** Lets the history answer `since` requests from the source's start point, and past unfilled gaps. */
  markCoveredAfter(seq: number): void {
    this.history.markCoveredAfter(seq);
  }

  /**
   * The source skipped `from..to` (events it could read neither from the engine nor from the
   * database, or longer than SSE_MAX_EVENT_BYTES): the replay history is complete after `to`, and
   * every connection that takes control messages is sent `stream.gap` (backfill from REST) before
   * the frames that follow; the others see the seqs jump.
   */
  announceGap(from: number, to: number): void {
    this.history.markCoveredAfter(to);
    if (!this.options.enabled) return;
    const message = control('stream.gap', to, { requestedSince: from - 1, oldestAvailableSeq: to + 1, backfill: `/v1/events?since=${from - 1}` });
    for (const client of [...this.index.clients()]) if (client.sub.control) this.sendControl(client, message);
  }

  /**
   * The engine's history was replaced (the runtime has already reset its state and derived the new
   * epoch): the replay history restarts after `head`; every connection that takes control messages
   * is sent `stream.reset` (reason history_replaced) after whatever it was sent before, and every
   * other connection is closed with 4011 so it reconnects and bootstraps.
   */
  announceReset(previousEpoch: string | null, head: number): void {
    this.history.reset(head);
    if (!this.options.enabled) return;
    const epoch = this.state.epoch();
    const message = control('stream.reset', head, { epoch, previousEpoch, reason: 'history_replaced' satisfies ResetReason });
    for (const client of [...this.index.clients()]) {
      if (client.sub.control) this.sendControl(client, message);
      else {
        this.remove(client);
        client.close(STREAM_RESET, 'stream reset');
      }
    }
  }

  /** A control message (stream.lagging) to every open connection that takes control messages, in order with its frames. */
  announceControl(message: Record<string, unknown>): void {
    if (!this.options.enabled) return;
    for (const client of [...this.index.clients()]) {
      if (client.sub.control) this.sendControl(client, message);
    }
  }

  /** The epoch changed without a replacement (an empty history got its first event): control connections are told. */
  epochChanged(): void {
    if (!this.options.enabled) return;
    for (const client of [...this.index.clients()]) {
      if (client.sub.control) this.sendControl(client, subscribedMessage(client.sub, this.state.epoch(), this.state.head()));
    }
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
      if (marketsFilterMatchesNothing(sub.requestedMarkets, known) === sub.marketsIgnored) continue;
      this.index.remove(client); // the index finds the buckets through the filters: out before they change
      judgeMarketsFilter(sub, known);
      this.index.add(client);
      if (this.options.enabled && sub.control) this.sendControl(client, subscribedMessage(sub, this.state.epoch(), this.state.head()));
    }
  }

  /**
   * Registers a connection. From this step on its live frames are held (queued) while it is opened:
   * control messages, replay (`since`) and snapshot are taken in this same synchronous step as any
   * publish, so the client sees them, then the held frames, then live, with no gap or repeat.
   */
  add(ws: WebSocket, sub: Subscription): StreamClient {
    const client = new StreamClient(ws, sub, this.options.bufferBytes, this.clock, this.options.deflate?.thresholdBytes ?? 0);
    client.listen(this);
    client.pingSlot = this.nextPingSlot;
    this.nextPingSlot = (this.nextPingSlot + 1) % PING_SLICES;
    this.ensurePing();
    if (this.closed) {
      client.close(GOING_AWAY, 'gateway shutting down');
      return client;
    }
    // The market list may have been loaded while the upgrade was being authorised.
    if (this.known !== null) judgeMarketsFilter(sub, this.known);
    this.index.add(client);
    this.options.metrics.clients.set(this.index.size);
    this.options.watch?.(null, sub);
    if (!this.options.enabled) return client;

    client.held = [];
    client.opening = this.opener.open(client);
    client.opening.then((live) => {
      // Settled: one promise shared by every live connection instead of its own for its life.
      if (live && client.opening) client.opening = OPENED;
      if (live && client.sub.heartbeatS !== null) {
        client.heartbeat = setInterval(() => this.heartbeat(client), client.sub.heartbeatS * 1000);
        client.heartbeat.unref();
      }
    }, (err: unknown) => {
      this.options.logger.warn({ err: (err as Error).message }, 'stream connection could not be opened');
      this.remove(client);
      client.close(INTERNAL_ERROR, 'could not open the stream');
    });
    return client;
  }

  private heartbeat(client: StreamClient): void {
    const head = this.state.head();
    this.sendControl(client, { kind: 'stream.heartbeat', seq: head ?? 0, ts: new Date().toISOString(), payload: { headSeq: head } });
  }

  /**
   * Control messages, answers and heartbeats: in order with the connection's frames (held while it
   * is opened), and judged by the slow-consumer bound as any frame (`control`: never as the rest of
   * an event already begun).
   */
  private sendControl(client: StreamClient, message: Record<string, unknown>): void {
    this.deliver(client, { frame: { kind: message.kind as string, seq: 0, ts: '', payload: {} }, ...framedText(JSON.stringify(message)) }, true);
  }

  remove(client: StreamClient): void {
    if (client.heartbeat) clearInterval(client.heartbeat);
    client.heartbeat = null;
    if (!this.index.has(client)) return; // removed already (a reset or slow close, then the socket's close)
    this.index.remove(client);
    this.options.metrics.clients.set(this.index.size);
    this.options.watch?.(client.sub, null);
  }

  /**
   * Swaps a live connection's filters for `next` (a subscribe or unsubscribe message) and sends
   * `ack`, then the snapshot frames of what `next` adds (what the connection did not receive
   * before: another market, kind, party or book view), then live frames: in one synchronous step
   * with any publish, so no frame is lost or doubled between the old filters and the new. The
   * connection must be open (the caller waits for `client.opening`). `snapshot` false: no frames.
   */
  resubscribe(client: StreamClient, next: Subscription, ack: (sub: Subscription, head: number | null) => Record<string, unknown>, snapshot: boolean): Promise<boolean> {
    const before = { ...client.sub };
    const registered = this.index.has(client);
    if (registered) this.index.remove(client); // the index finds the buckets through the filters: out before they change
    Object.assign(client.sub, next);
    if (this.known !== null) judgeMarketsFilter(client.sub, this.known);
    if (registered) {
      this.index.add(client);
      this.options.watch?.(before, client.sub);
    }
    const message = json(ack(client.sub, this.state.head()));
    if (!this.options.enabled || !registered || !this.state.ready()) {
      if (client.send(message) !== 'slow') return Promise.resolve(registered);
      if (registered) this.closeSlow(client, { kind: 'stream.ack', seq: 0 });
      else client.closeSlow();
      return Promise.resolve(false);
    }
    client.held = [];
    const parts = snapshot ? this.state.snapshot(client.sub) : null;
    const added = (f: Frame): boolean => !matches(before, f);
    const fresh: SnapshotParts | null = parts && { frames: parts.frames.filter(added), later: parts.later && parts.later.then((fs) => fs.filter(added)) };
    return this.opener.resubscribed(client, message, fresh);
  }

  /** An answer to a client message, in order with the connection's frames. */
  reply(client: StreamClient, message: Record<string, unknown>): void {
    // Before the runtime is ready an opening connection has been sent nothing and holds nothing
    // (deliver drops what is published then: it is not live for it). An answer is no published
    // frame: dropped, its message would never be answered (an order placed with no outcome), and
    // held, it would wait for the engine. It goes out at once, ahead of the opening.
    if (client.held && !this.state.ready()) {
      const data = json(message);
      if (client.send(data) === 'slow') this.closeSlow(client, { kind: message.kind as string, seq: 0 });
      return;
    }
    this.sendControl(client, message);
  }

  /** Sends one frame to every matching client; the JSON is made once. Returns the number of clients it reached. */
  publish(frame: Frame): number {
    const sent: Sent = { frame, ...framedText(serializeFrame(frame)) };
    this.history.push(sent);
    if (frame.kind !== 'orderbook.snapshot' && frame.kind !== 'orderbook.delta' && (this.lastSeq === null || frame.seq > this.lastSeq)) this.lastSeq = frame.seq;
    let n = 0;
    this.index.forEachRecipient(frame, (client) => {
      if (this.deliver(client, sent)) n++;
    });
    this.options.metrics.sent(frame.kind, n);
    return n;
  }

  publishAll(frames: readonly Frame[]): void {
    for (const f of frames) this.publish(f);
  }

  /**
   * Runs `fn` (which publishes) with every recipient's frames held back as a path of the batch
   * (frame-path.ts), then writes each recipient's frames: the frames of one SSE chunk reach each
   * client in one write of one Buffer, the same Buffer for every client given the same frames.
   */
  batched(fn: () => void): void {
    if (this.batch) return fn();
    this.beginBatch();
    try {
      fn();
    } finally {
      this.endBatch();
    }
  }

  /** Opens a batch (nothing inside one): what is published until `endBatch` leaves for each client in one write. */
  beginBatch(): void {
    this.batch ??= { root: new FramePath(), clients: [] };
  }

  endBatch(): void {
    const batch = this.batch;
    if (!batch) return;
    this.batch = null;
    for (const c of batch.clients) c.flush();
  }

  /**
   * true when written; a client past its bound is closed with 4008 (and unregistered at once).
   * `control`: a message of the connection's own (seq 0), not a frame of an event: it is judged
   * even right after a frame, since "the rest of an event" applies only to frames of that event.
   */
  private deliver(client: StreamClient, sent: Sent, control = false): boolean {
    if (client.held) {
      // Being opened: held in order, and judged as live traffic. Before the runtime is ready
      // nothing is held: what is published then fills the replay history and the state the
      // opening is made of (a replica's catch-up), and is not live for this connection.
      if (client.closing || !this.state.ready()) return false;
      client.held.push({ data: sent.data, wire: sent.wire, kind: sent.frame.kind, seq: sent.frame.seq });
      client.heldBytes += sent.data.length;
      if (client.heldBytes <= this.options.bufferBytes) return true;
      this.closeSlow(client, sent.frame);
      return false;
    }
    const batch = this.batch;
    const seq = control ? undefined : sent.frame.seq;
    const r = batch ? client.queue(sent.data, sent.wire, seq, batch.root) : client.send(sent.data, sent.wire, seq);
    if (r === 'queued') batch!.clients.push(client);
    if (r === 'sent' || r === 'queued') return true;
    if (r === 'slow') this.closeSlow(client, sent.frame);
    return false;
  }

  private closeSlow(client: StreamClient, frame: Pick<Frame, 'kind' | 'seq'>): void {
    this.remove(client);
    this.options.metrics.slowCloses.inc();
    this.options.metrics.framesDropped.inc({ kind: frame.kind });
    this.options.logger.warn({ kind: frame.kind, seq: frame.seq }, 'stream client too slow: closed with 4008');
    client.closeSlow();
  }

  /**
   * Pings go out in PING_SLICES slices spread over the period, each connection in its own slice
   * once per period: at 20 000 connections one round all at once held the event loop for hundreds
   * of milliseconds (a write per socket, then as many pongs to read), and every frame published
   * meanwhile waited.
   */
  private ensurePing(): void {
    if (this.pingTimer || this.closed) return;
    this.pingTimer = repeatOn(this.clock, this.options.pingMs / PING_SLICES, () => this.pingSlice());
  }

  /**
   * The next slice: a peer that did not answer its previous ping (one period ago) is dropped; the
   * others are sent the slice's one ping (client.ts pingFrame), made when the first needs it.
   */
  private pingSlice(): void {
    const slot = this.pingTick;
    this.pingTick = (this.pingTick + 1) % PING_SLICES;
    let ping: Ping | undefined;
    for (const client of this.index.clients()) {
      if (client.pingSlot !== slot) continue;
      if (!client.alive) {
        this.remove(client);
        client.ws.terminate();
        continue;
      }
      client.ping((ping ??= pingFrame()));
    }
  }

  /** Shutdown: every client gets close code 1001; new connections are refused. */
  async closeAll(): Promise<void> {
    this.closed = true;
    this.stalls.stop();
    if (this.pingTimer) this.pingTimer.cancel();
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
