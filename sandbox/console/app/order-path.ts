// How the order ticket and the cancel buttons reach the gateway, and which way each call went
// (shown next to the answer). The party's stream connection carries them when it is open
// (StreamClient.placeOrder / cancelOrder: the same signed bytes as REST, verified by the gateway as
// REST is, answered with the engine's answer); REST (POST /v1/orders, DELETE /v1/orders/:id) only
// when that socket is not open at the moment of the call. A socket call that fails after it was sent
// is not sent again over REST: the order may have reached the engine (the error is shown instead).
import type { Answer, GatewayClient, OrderAccepted, OrderCancelled, OrderRequest, StreamClient, TriggerWouldFire } from '@gateway/client';

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

/**
 * Orders over the open socket of `stream()`, REST when it is not open (`isOpen()`: the stream's
 * state is live or backfilling, i.e. a connection is open).
 */
export function socketFirstOrderPath(client: GatewayClient, stream: () => StreamClient | null, isOpen: () => boolean): OrderPath {
  const rest = restOrderPath(client);
  return {
    place: async (order, options) => {
      const s = stream();
      return s && isOpen() ? { answer: await s.placeOrder(order, options), path: 'socket' } : rest.place(order, options);
    },
    cancel: async (orderId) => {
      const s = stream();
      return s && isOpen() ? { answer: await s.cancelOrder(orderId), path: 'socket' } : rest.cancel(orderId);
    },
  };
}
