// What the live runtime and the upgrade handler need from the fan-out (implemented by StreamHub).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Frame } from '../projections/types.js';
import type { Subscription } from './subscription.js';

export interface StreamFanout {
  /** false without ENGINE_ADMIN_TOKEN: clients connect and receive nothing. */
  readonly enabled: boolean;
  /** Open connections (for the connection limit and metrics). */
  readonly size: number;
  readonly isClosed: boolean;
  /** Completes the WebSocket handshake of an authorised upgrade and registers the connection. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription): void;
  /** Returns the number of connections the frame reached (held frames of connections being opened included). */
  publish(frame: Frame): number;
  publishAll(frames: readonly Frame[]): void;
  /** Runs `fn` (which publishes): its frames leave for each client in one write. */
  batched(fn: () => void): void;
  markCoveredAfter(seq: number): void;
  resetHistory(seq: number): void;
  /** The engine history was replaced (the new epoch is already current): stream.reset or close 4011 for every connection. */
  announceReset(previousEpoch: string | null, head: number): void;
  /** The epoch became known without a replacement: stream.subscribed again to control connections. */
  epochChanged(): void;
  setKnownMarkets(known: ReadonlySet<string> | null): void;
  /** Shutdown: every client gets close code 1001; new connections are refused. */
  closeAll(): Promise<void>;
  /** Releases what closeAll left running (fan-out worker processes), once the HTTP server has closed. */
  stop(): Promise<void>;
}
