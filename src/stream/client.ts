// One /v1/stream connection: its filters, and bounded sending. The socket's unsent bytes
// (`ws.bufferedAmount`: what the kernel has not taken yet plus what ws holds) are the client's
// queue; frames are never copied per client (every client gets the same Buffer). When a frame
// would take that queue past the bound, the client is closed with 4008 instead of delaying anyone.
import WebSocket from 'ws';
import * as wsModule from 'ws';
import type { Subscription } from './subscription.js';

interface RawSocket {
  cork(): void;
  uncork(): void;
  write(data: Buffer): boolean;
  writable: boolean;
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

export const SLOW_CONSUMER = 4008;
/** A slow client cannot read its close frame promptly; it is cut off after this grace period. */
const SLOW_TERMINATE_MS = 5_000;

export class StreamClient {
  alive = true;
  closing = false;
  /** Corked for the current batch: its frames leave in one write (one syscall), not one each. */
  corked = false;
  /** Seq of the last frame written (control messages have none). */
  private lastSeq: number | undefined;

  constructor(
    readonly ws: WebSocket,
    readonly sub: Subscription,
    private readonly bufferLimit: number,
  ) {}

  /**
   * 'sent', 'skipped' (not open), or 'slow' (over the bound: the caller closes it). `wire` is the
   * pre-built frame: written straight to the socket, it skips ws's per-send framing (the hot path
   * at 10 000 clients). Frames are whole and writes sequential, so they never interleave with
   * ws's own pings; `bufferedAmount` still sees them (it includes the socket's buffer).
   */
  send(data: Buffer, wire?: Buffer, seq?: number): 'sent' | 'skipped' | 'slow' {
    if (this.closing || this.ws.readyState !== WebSocket.OPEN) return 'skipped';
    // The rest of an event whose first frames were written goes out even past the bound (one
    // event's frames, a few KB): a client closed inside an event and resuming with
    // `since=<last seq>` would never get them. The close comes at the next event.
    if (this.ws.bufferedAmount + data.length > this.bufferLimit && (seq === undefined || seq !== this.lastSeq)) return 'slow';
    const socket = this.socket;
    if (wire && socket?.writable) socket.write(wire);
    else this.ws.send(data, { binary: false });
    if (seq !== undefined) this.lastSeq = seq;
    return 'sent';
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

  closeSlow(): void {
    if (this.closing) return;
    this.closing = true;
    this.ws.close(SLOW_CONSUMER, `slow consumer: more than ${this.bufferLimit} bytes unsent`);
    setTimeout(() => this.ws.terminate(), SLOW_TERMINATE_MS).unref();
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), SLOW_TERMINATE_MS).unref();
  }
}
