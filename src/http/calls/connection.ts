// What a call that changes the connection itself (subscribe, unsubscribe) is given on the socket:
// the connection, the stream's context, the address its work budgets key on, and the ack to write.
import type { StreamClient } from '../../stream/client.js';
import type { Subscription } from '../../stream/subscription.js';
import type { UpgradeContext } from '../stream-upgrade.js';

export interface ConnectionScope {
  readonly client: StreamClient;
  readonly stream: UpgradeContext;
  /** The client address as the work budgets key it (IPv6 by /64). */
  readonly address: string;
  /** The `stream.ack` of this message: made by the hub with the filters as applied, at its place among the frames. */
  readonly ack: (sub: Subscription, head: number | null) => Record<string, unknown>;
}
