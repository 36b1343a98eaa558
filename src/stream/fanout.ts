// The hub as the live runtime and the upgrade handler see it (implemented by StreamHub): the
// broadcast side (FramePublisher, src/contracts/frame-publisher.ts) and the connection side.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FramePublisher } from '../contracts/frame-publisher.js';
import type { Subscription } from './subscription.js';

export interface StreamFanout extends FramePublisher {
  /** false without ENGINE_ADMIN_TOKEN: clients connect and receive nothing. */
  readonly enabled: boolean;
  /** Open connections (for the connection limit and metrics). */
  readonly size: number;
  readonly isClosed: boolean;
  /** Completes the WebSocket handshake of an authorised upgrade and registers the connection. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription): void;
  /** Shutdown: every client gets close code 1001; new connections are refused. */
  closeAll(): Promise<void>;
}
