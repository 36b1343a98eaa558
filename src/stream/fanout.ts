// The hub as the live runtime and the upgrade handler see it (implemented by StreamHub): the
// broadcast side (FramePublisher, src/contracts/frame-publisher.ts) and the connection side.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FramePublisher } from '../contracts/frame-publisher.js';
import type { Subscription } from './subscription.js';
import type { StreamClient } from './client.js';
import type { ClientMessageHandlers } from './hub.js';
import type { AddressInbound } from './inbound-limit.js';

export interface StreamFanout extends FramePublisher {
  /** false without ENGINE_ADMIN_TOKEN: clients connect and receive nothing. */
  readonly enabled: boolean;
  /** Open connections (for the connection limit and metrics). */
  readonly size: number;
  readonly isClosed: boolean;
  /** Completes the WebSocket handshake of an authorised upgrade and registers the connection. */
  /**
   * `tooLarge`: told when a deflate connection is closed for a message inflating past the message
   * bound (a compression bomb; stream-upgrade.ts counts them per address).
   */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription, handlers?: ClientMessageHandlers, tooLarge?: () => void, address?: AddressInbound | null): void;
  /** Swaps a live connection's filters (a subscribe / unsubscribe message): ack, snapshot of what was added, then live. */
  resubscribe(client: StreamClient, next: Subscription, ack: (sub: Subscription, head: number | null) => Record<string, unknown>, snapshot: boolean): Promise<boolean>;
  /** An answer to a client message, in order with the connection's frames. */
  reply(client: StreamClient, message: Record<string, unknown>): void;
  /** A control message to every connection that takes them (stream.lagging, src/stream/lag-notice.ts). */
  announceControl(message: Record<string, unknown>): void;
  /** The newest seq the gateway has (the `seq` of answers). */
  head(): number | null;
  /** Shutdown: every client gets close code 1001; new connections are refused. */
  closeAll(): Promise<void>;
}
