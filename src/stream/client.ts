// One /v1/stream connection: its filters, and bounded sending. The socket's unsent bytes
// (`ws.bufferedAmount`: what the kernel has not taken yet plus what ws holds) are the client's
// queue; frames are never copied per client (every client gets the same Buffer). When a frame
// would take that queue past the bound, the client is closed with 4008 instead of delaying anyone.
import { systemClock, type Clock } from '../contracts/clock.js';
import { randomBytes } from 'node:crypto';
import { deflatedFrame, serverWindowBits } from './deflate-frame.js';
import WebSocket from 'ws';
import * as wsModule from 'ws';
import type { Subscription } from './subscription.js';
import type { InboundSink } from './inbound-limit.js';
import type { FramePath } from './frame-path.js';
import { SLOW_CONSUMER } from './close-codes.js';

/**
 * What receives one connection's messages (those within the inbound bound): made per connection
 * by the edge (src/http/stream-messages.ts), which reads, checks and answers them.
 */
export interface ClientMessageHandlers {
  message(data: Buffer, client: StreamClient): void;
  /** A message larger than the bound's maxBytes (and within the hard cap): answered, not read. */
  oversize(data: Buffer, client: StreamClient): void;
}

/** The hub a connection is registered with: told when its socket closes, it floods, or a write of its own would pass its bound. */
export interface ClientOwner {
  remove(client: StreamClient): void;
  flooded(): void;
  /** A write outside the hub's frames (`kind`: what it was) would take it past its bound: closed 4008. */
  tooSlow(client: StreamClient, kind: string): void;
}

interface RawSocket {
  cork(): void;
  uncork(): void;
  write(data: Buffer): boolean;
  writable: boolean;
  writableNeedDrain: boolean;
  once(event: 'drain' | 'close', listener: () => void): void;
  off(event: 'drain' | 'close', listener: () => void): void;
}

/**
 * The complete WebSocket frame (header + payload) of a server text message, built once so that the
 * same bytes go to every recipient (a server never masks, so they are identical for all).
 */
type FrameOptions = { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean };
// ws exports its Sender (and the static framing function) at runtime; @types/ws does not declare it.
const Sender = (wsModule as unknown as { Sender: { frame(data: Buffer, o: FrameOptions): Buffer[] } }).Sender;

export function wireFrame(data: Buffer): Buffer {
  const [header, body] = Sender.frame(data, { fin: true, rsv1: false, opcode: 1, mask: false, readOnly: true });
  return body ? Buffer.concat([header!, body]) : header!;
}

/** A slow client cannot read its close frame promptly; it is cut off after this grace period. */
const SLOW_TERMINATE_MS = 5_000;

// The listeners of every registered connection's socket: functions of the module, which find the
// client on the socket, rather than closures made per connection (each costs memory on every idle
// connection: at 20 000 connections, megabytes).
const CLIENT = Symbol('stream client');
type Tagged = WebSocket & { [CLIENT]?: StreamClient };

function onPong(this: Tagged, data: Buffer): void {
  this[CLIENT]?.onPong(data);
}

function onPing(this: Tagged, data: Buffer): void {
  this[CLIENT]?.onPing(data);
}

function onClose(this: Tagged): void {
  const client = this[CLIENT];
  if (client) client.owner?.remove(client);
}

function onError(this: Tagged, err?: Error & { code?: string }): void {
  // ws stopped inflating a message at the bound (maxPayload) and is closing with 1009: told first.
  if (err?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this[CLIENT]?.tooLarge?.();
  this.terminate();
}

function terminate(ws: WebSocket): void {
  ws.terminate();
}

/** A liveness ping's payload: random bytes, new for every slice of every period. */
const PING_BYTES = 8;

/** A liveness ping: its payload and its complete WebSocket frame (a server's ping is never masked). */
export interface Ping {
  payload: Buffer;
  wire: Buffer;
}

/**
 * The ping of one slice of a period (StreamHub.pingSlice), made once for every connection of the
 * slice: a ping per connection cost random bytes, a frame header and a vectored write each, with
 * the frames of the event loop waiting behind a slice of thousands.
 */
export function pingFrame(): Ping {
  const payload = randomBytes(PING_BYTES);
  const [header, body] = Sender.frame(payload, { fin: true, rsv1: false, opcode: 0x9, mask: false, readOnly: true });
  return { payload, wire: body ? Buffer.concat([header!, body]) : header! };
}

/** The pong answering a peer's ping `payload` (at most 125 bytes): a complete, unmasked control frame. */
export function pongFrame(payload: Buffer): Buffer {
  const [header, body] = Sender.frame(payload, { fin: true, rsv1: false, opcode: 0xa, mask: false, readOnly: false });
  return body ? Buffer.concat([header!, body]) : header!;
}

export class StreamClient implements InboundSink {
  /** Answered the last liveness ping (or none was sent yet). */
  alive = true;
  /** The slice of each ping period in which the hub pings it (StreamHub.ensurePing). */
  pingSlot = 0;
  /**
   * The payload of the ping awaiting its pong (its slice's, shared); null when none awaits.
   * Unsolicited pongs (any other payload) prove nothing.
   */
  private pingPayload: Buffer | null = null;
  /** The hub it is registered with (null: none yet). */
  owner: ClientOwner | null = null;
  /** What reads its messages (null: they are dropped). */
  handlers: ClientMessageHandlers | null = null;
  closing = false;
  /** Corked while its opening frames are written in runs (ConnectionOpener). */
  corked = false;
  /**
   * The frames the current batch gave it, not written yet (StreamHub.batched): written as one
   * Buffer by `flush` at the batch's end, or before anything else is written to it. null: none.
   */
  pending: FramePath | null = null;
  /**
   * Live frames waiting while the connection is being opened (replay, snapshot): null once live.
   * Their bytes are what the slow-consumer bound judges meanwhile (a replay is never judged).
   */
  held: Array<{ data: Buffer; wire?: Buffer; kind: string; seq: number }> | null = null;
  heldBytes = 0;
  heartbeat: NodeJS.Timeout | null = null;
  /** The opening (replay, snapshot, held frames) while or once it runs: true once live; null when there is none (a disabled hub). */
  opening: Promise<boolean> | null = null;
  /** Seq of the last live frame written by `send` (control messages have none). */
  private lastSeq: number | undefined;

  /**
   * permessage-deflate was negotiated: a frame at or over the threshold is written compressed, its
   * compressed frame made once for every deflate connection (deflate-frame.ts, ADR 0367); a
   * smaller one as the plain frame.
   */
  readonly deflate: boolean;
  /** A deflate connection's window for the gateway's messages (its negotiated server_max_window_bits). */
  private readonly deflateBits: number;
  /** A deflate connection's: told when ws closes it for a message inflating past the bound (hub.accept). */
  tooLarge: (() => void) | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly sub: Subscription,
    private readonly bufferLimit: number,
    /** Times the wait for a closed peer's close frame before the socket is terminated. */
    private readonly clock: Clock = systemClock,
    /** On a deflate connection, frames smaller than this go uncompressed (WS_DEFLATE_THRESHOLD_BYTES). */
    private readonly deflateThreshold = 0,
  ) {
    this.deflate = typeof ws.extensions === 'string' && ws.extensions.includes('permessage-deflate');
    this.deflateBits = this.deflate ? serverWindowBits(ws) : 15;
  }

  /** What to write to a deflate connection for `data`: compressed once for all (at or over the threshold), else plain. */
  private deflateWire(data: Buffer, wire: Buffer | undefined): Buffer {
    if (data.length >= this.deflateThreshold) return deflatedFrame(data, this.deflateBits);
    return wire ?? wireFrame(data);
  }

  /**
   * One frame onto the wire: straight to the socket, as the frame compressed once for every deflate
   * connection (deflate) or the shared pre-built frame (plain); through ws's own framing when the
   * socket cannot be written directly or no frame was built.
   */
  private put(data: Buffer, wire: Buffer | undefined): void {
    const socket = this.socket;
    if (socket?.writable && this.deflate) socket.write(this.deflateWire(data, wire));
    else if (socket?.writable && wire) socket.write(wire);
    else this.ws.send(data, { binary: false });
  }

  /** Registers with `owner`: its socket's pongs, close and errors are handled from now on. */
  listen(owner: ClientOwner): void {
    this.owner = owner;
    const ws = this.ws as Tagged;
    ws[CLIENT] = this;
    ws.on('pong', onPong);
    ws.on('ping', onPing);
    ws.on('close', onClose);
    ws.on('error', onError);
  }

  inbound(data: Buffer): void {
    this.handlers?.message(data, this);
  }

  oversize(data: Buffer): void {
    this.handlers?.oversize(data, this);
  }

  abuse(): void {
    this.owner?.flooded();
  }

  /**
   * 'sent', 'skipped' (not open), or 'slow' (over the bound: the caller closes it). `wire` is the
   * pre-built frame: written straight to the socket, it skips ws's per-send framing (the hot path
   * at 10 000 clients). Frames are whole and writes sequential, so they never interleave with
   * ws's own pings; `bufferedAmount` still sees them (it includes the socket's buffer).
   */
  send(data: Buffer, wire?: Buffer, seq?: number): 'sent' | 'skipped' | 'slow' {
    if (this.pending) this.flush();
    if (this.closing || this.ws.readyState !== WebSocket.OPEN) return 'skipped';
    // The rest of an event whose first frames were written goes out even past the bound (one
    // event's frames, a few KB): a client closed inside an event and resuming with
    // `since=<last seq>` would never get them. The close comes at the next event.
    if (this.ws.bufferedAmount + data.length > this.bufferLimit && (seq === undefined || seq !== this.lastSeq)) return 'slow';
    this.put(data, wire);
    if (seq !== undefined) this.lastSeq = seq;
    return 'sent';
  }

  /**
   * In a batch: `send`, except that the frame joins the connection's pending frames (`root`: the
   * batch's tree), written together by `flush`; the bound counts them as unsent. 'queued' when it
   * is the connection's first pending frame (the caller flushes it at the batch's end). A
   * connection with deflate, or whose socket is not writable, is sent to at once.
   */
  queue(data: Buffer, wire: Buffer, seq: number | undefined, root: FramePath): 'queued' | 'sent' | 'skipped' | 'slow' {
    if (this.deflate || !this.socket?.writable) return this.send(data, wire, seq);
    if (this.closing || this.ws.readyState !== WebSocket.OPEN) return 'skipped';
    const pending = this.pending;
    if (this.ws.bufferedAmount + (pending?.bytes ?? 0) + data.length > this.bufferLimit && (seq === undefined || seq !== this.lastSeq)) return 'slow';
    this.pending = (pending ?? root).then(wire);
    if (seq !== undefined) this.lastSeq = seq;
    return pending ? 'sent' : 'queued';
  }

  /**
   * Writes the pending frames: one Buffer, shared with every connection given the same frames (a
   * long path of its own, frame by frame in one corked write: frame-path.ts).
   */
  flush(): void {
    const pending = this.pending;
    if (pending === null) return;
    this.pending = null;
    const joined = pending.take();
    const socket = this.socket;
    if (this.ws.readyState !== WebSocket.OPEN || !socket?.writable) return;
    if (joined) {
      socket.write(joined);
      return;
    }
    socket.cork();
    for (const frame of pending.frames()) socket.write(frame);
    socket.uncork();
  }

  /**
   * Writes without the slow-consumer check (replay and snapshot frames, paced by the caller with
   * `drained`). false when the connection is no longer open.
   */
  write(data: Buffer, wire?: Buffer): boolean {
    if (this.pending) this.flush();
    if (this.closing || this.ws.readyState !== WebSocket.OPEN) return false;
    this.put(data, wire);
    return true;
  }

  /** Resolves once the socket has drained its write buffer (or closed). */
  drained(): Promise<void> {
    const socket = this.socket;
    if (!socket || !socket.writableNeedDrain) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const done = (): void => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.once('drain', done);
      socket.once('close', done);
    });
  }

  private get socket(): RawSocket | undefined {
    return (this.ws as unknown as { _socket?: RawSocket })._socket;
  }

  /** ws keeps its net.Socket as `_socket`; corking it is how ws batches a frame's header and body too. */
  cork(): void {
    const socket = this.socket;
    if (!socket || this.corked) return;
    socket.cork();
    this.corked = true;
  }

  uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.socket?.uncork();
  }

  /**
   * Sends the liveness ping `ping` (its payload unguessable, and new for each slice: a peer learns
   * it only by reading its ping). ws emits 'pong' for unsolicited pongs too, so only a pong echoing
   * this payload (RFC 6455 §5.5.3) marks the peer alive. The pre-built frame is written straight
   * to the socket, as the data frames are, with deflate too: ws's sender writes each frame whole
   * in one synchronous write, so a control frame written between two never splits one (RFC 6455
   * §5.4 lets control frames pass data messages), and a ping never waits behind this connection's
   * messages queued for the process-wide zlib pool, which another connection can keep busy.
   */
  ping(ping: Ping): void {
    this.alive = false;
    this.pingPayload = ping.payload;
    if (this.ws.readyState !== WebSocket.OPEN) return; // the next round finds it not alive
    const socket = this.socket;
    if (this.pending) this.flush();
    if (socket?.writable) socket.write(ping.wire);
    else this.ws.ping(ping.payload);
  }

  /**
   * The peer's ping, answered here rather than by ws (its servers run with autoPong off): ws
   * answered every ping outside any bound, so a client that pinged and never read made the
   * gateway buffer pongs without end. A pong counts as any write: past the bound, closed 4008.
   */
  onPing(data: Buffer): void {
    if (this.closing || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.pending) this.flush();
    // A pong frame: 2 header bytes and the payload echoed (at most 125 bytes). While the connection
    // is being opened its buffer holds the paced replay and snapshot, which are never judged: the
    // pongs are counted with the live frames held meanwhile, as those are (the bound's one measure
    // of an opening connection).
    const bytes = 2 + data.length;
    const unsent = this.held ? this.heldBytes : this.ws.bufferedAmount;
    if (unsent + bytes > this.bufferLimit) {
      this.owner?.tooSlow(this, 'pong');
      return;
    }
    if (this.held) this.heldBytes += bytes;
    // Written straight to the socket, as the liveness ping (above): with deflate, ws's sender would
    // queue it behind this connection's messages waiting for the zlib pool.
    const socket = this.socket;
    if (socket?.writable) socket.write(pongFrame(data));
    else this.ws.pong(data);
  }

  onPong(data: Buffer): void {
    if (this.pingPayload !== null && data.equals(this.pingPayload)) {
      this.alive = true;
      this.pingPayload = null;
    }
  }

  closeSlow(): void {
    if (this.closing) return;
    this.flush(); // what it was given before the close frame
    this.closing = true;
    this.ws.close(SLOW_CONSUMER, `slow consumer: more than ${this.bufferLimit} bytes unsent`);
    this.terminateLater();
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.flush();
    this.closing = true;
    this.ws.close(code, reason);
    this.terminateLater();
  }

  /** A peer that does not answer the close frame within SLOW_TERMINATE_MS has its socket destroyed. */
  private terminateLater(): void {
    const ws = this.ws;
    this.clock.setTimeout(() => terminate(ws), SLOW_TERMINATE_MS).unref();
  }
}
