// Type tests of the desk functions (docs/client.md "The desk"): `npm run typecheck` compiles this
// file, so every `@ts-expect-error` must be an error; expectTypeOf pins what they answer.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  cancelAll,
  cancelOrders,
  deadMansSwitch,
  StreamClient,
  GatewayClient,
  orderByClientId,
  placeOrders,
  replaceOrder,
  sendBatch,
  type BatchOptions,
  type BatchResult,
  type CancelOutcome,
  type ClientOrder,
  type PlaceOutcome,
  type ReplaceResult,
} from '../../../packages/client/src/index.js';

const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 0 } });
const stream = new StreamClient({ client, onMessage: () => {} });

describe('desk types', () => {
  it('stopOnFailure only with ordered batches', () => {
    const ok: BatchOptions[] = [{}, { mode: 'concurrent' }, { mode: 'ordered' }, { mode: 'ordered', stopOnFailure: true }];
    // @ts-expect-error stopOnFailure on a concurrent batch (every item is sent at once)
    const concurrentStop: BatchOptions = { stopOnFailure: true };
    // @ts-expect-error stopOnFailure with mode concurrent
    const explicit: BatchOptions = { mode: 'concurrent', stopOnFailure: true };
    // @ts-expect-error an unknown mode
    const unknown: BatchOptions = { mode: 'parallel' };
    expect([ok, concurrentStop, explicit, unknown]).toHaveLength(4);
  });

  it('orders are checked as placeOrder checks them; answers are typed per op', () => {
    const call = (): void => {
      // @ts-expect-error a limit order without a price
      void placeOrders(client, [{ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01' }]);
      // @ts-expect-error a misspelt known market
      void placeOrders(client, [{ market: 'btc-perp', side: 'buy', type: 'market', size: '0.01' }]);
      // @ts-expect-error a number for a decimal
      void replaceOrder(client, 'o-1', { market: 'BTC-PERP', side: 'buy', type: 'limit', size: 0.01, price: '1' });
      // @ts-expect-error order ids are strings
      void cancelOrders(client, [17]);
      // @ts-expect-error a batch item needs its signature
      void sendBatch(client, [{ op: 'cancel', orderId: 'o-1' }]);
      // @ts-expect-error cancelAll takes a market, not a list
      void cancelAll(client, { market: ['BTC-PERP'] });
      // @ts-expect-error a switch needs the orders it covers
      void deadMansSwitch({ client, stream, timeoutMs: 5_000 });
      // @ts-expect-error timeoutMs is a number of ms
      void deadMansSwitch({ client, stream, timeoutMs: '5s', orders: () => [] });
    };
    expect(typeof call).toBe('function');
    expectTypeOf(placeOrders<'BTC-PERP'>).returns.resolves.toEqualTypeOf<BatchResult<PlaceOutcome>>();
    expectTypeOf(cancelOrders).returns.resolves.toEqualTypeOf<BatchResult<CancelOutcome>>();
    expectTypeOf(replaceOrder<'BTC-PERP'>).returns.resolves.toEqualTypeOf<ReplaceResult>();
    expectTypeOf(orderByClientId).returns.resolves.toEqualTypeOf<ClientOrder | null>();
  });

  it('an answered outcome narrows to the engine\'s answer', () => {
    const read = (r: PlaceOutcome): string | null => {
      if (r.outcome === 'answered' && r.body.ok) return r.body.orderId;
      if (r.outcome === 'refused') return r.body.code;
      // @ts-expect-error a skipped item has no body
      return r.body.code;
    };
    expect(read({ op: 'place', outcome: 'refused', status: 409, body: { error: 'x', code: 'duplicate_client_order_id' } })).toBe('duplicate_client_order_id');
  });
});
