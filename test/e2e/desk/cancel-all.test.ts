// Cancel-all (docs/client.md "The desk"): the client signs the cancels of the party's open orders,
// known from the engine (getUserMe) or from its user channel (UserOrdersStore), and sends them as
// batches of up to 50; by market or every market. Against the reference engine.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/fleet.js';
import { cancelAll, type GatewayClient, placeOrders, StreamClient, UserOrdersStore, type OrderRequest, type WebSocketCtor } from '../../../packages/client/src/index.js';

const bid = (market: string, price: string): OrderRequest => ({ market, side: 'buy', type: 'limit', size: market === 'BTC-PERP' ? '0.01' : '0.1', price }) as OrderRequest;

describe('cancel-all', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: GatewayClient;
  const openOf = async (market?: string) => (await engineOpenOrders(engine, alice.session!.party)).filter((o) => market === undefined || o.market === market).length;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    alice = await deskTrader(gw.url, engine, 'alice', '10000000');
  });

  it('by market, then every market, from the engine\'s list: more than 50 orders in batches of 50', async () => {
    await placeOrders(alice, Array.from({ length: 50 }, (_, i) => bid('BTC-PERP', String(40_000 + i))));
    await placeOrders(alice, Array.from({ length: 10 }, (_, i) => bid('BTC-PERP', String(41_000 + i))));
    await placeOrders(alice, Array.from({ length: 5 }, (_, i) => bid('ETH-PERP', String(2_000 + i))));
    expect(await openOf()).toBe(65);
    const eth = await cancelAll(alice, { market: 'ETH-PERP' });
    expect(eth.orderIds).toHaveLength(5);
    expect(eth.results.every((r) => r.outcome === 'answered' && r.body.ok)).toBe(true);
    expect(await openOf('ETH-PERP')).toBe(0);
    expect(await openOf('BTC-PERP')).toBe(60);
    const all = await cancelAll(alice);
    expect(all.orderIds).toHaveLength(60);
    expect(all.weight).toBe(5 + 1);
    expect(all.results.every((r) => r.outcome === 'answered' && r.body.ok)).toBe(true);
    expect(await openOf()).toBe(0);
    expect((await cancelAll(alice)).orderIds).toEqual([]);
  });

  it('from the user channel\'s store (no engine read): what the client knows is what it cancels', async () => {
    const store = new UserOrdersStore();
    const party = alice.session!.party;
    const stream = new StreamClient({
      client: alice,
      kinds: ['order.update'],
      party: [party],
      WebSocket: WebSocket as unknown as WebSocketCtor,
      onMessage: (m) => {
        if (m.source === 'live' && m.frame.kind === 'order.update') store.apply(m.frame);
      },
    });
    try {
      stream.start();
      await placeOrders(alice, Array.from({ length: 7 }, (_, i) => bid('SOL-PERP', String(100 + i))));
      await waitFor(() => store.open().length === 7, 5_000, 'the store knows the orders');
      const done = await cancelAll(alice, { orders: store.open(), sender: stream.sender });
      expect(done.orderIds).toHaveLength(7);
      expect(done.results.every((r) => r.outcome === 'answered' && r.body.ok)).toBe(true);
      await waitFor(() => store.open().length === 0, 5_000, 'the store sees them cancelled');
      expect(await openOf()).toBe(0);
    } finally {
      stream.stop();
    }
  });
});
