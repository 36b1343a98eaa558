// How the order ticket and the cancel buttons reach the gateway, and which way each call went
// (shown next to the answer). Today: REST (POST /v1/orders, DELETE /v1/orders/:id), signed by
// the party's session. The seam for the socket: an OrderPath whose place/cancel go over the open
// stream connection first and fall back to REST only when that socket is closed.
import type { Answer, GatewayClient, OrderAccepted, OrderCancelled, OrderRequest, TriggerWouldFire } from '@gateway/client';

export type PathName = 'socket' | 'REST';

export interface Sent<T> {
  answer: T;
  path: PathName;
}

export interface OrderPath {
  place(order: OrderRequest, options: { allowImmediateTrigger: boolean }): Promise<Sent<Answer<OrderAccepted> | TriggerWouldFire>>;
  cancel(orderId: string): Promise<Sent<Answer<OrderCancelled>>>;
}

/** Orders over REST. */
export function restOrderPath(client: GatewayClient): OrderPath {
  return {
    place: async (order, options) => ({ answer: await client.placeOrder(order, options), path: 'REST' }),
    cancel: async (orderId) => ({ answer: await client.cancelOrder(orderId), path: 'REST' }),
  };
}
