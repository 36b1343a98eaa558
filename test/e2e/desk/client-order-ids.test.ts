// Client order ids (docs/trading.md "Client order ids") against the reference engine: an order's
// status by its clientOrderId over REST and the socket; a second order of the party with a known id
// refused with duplicate_client_order_id and the first order's status, before the engine sees it,
// also inside a batch and across two gateways sharing one Redis; a rejected order frees its id.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { fleetServices, REDIS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { GatewayClient, GatewayError, orderByClientId, placeOrders, StreamClient, type OrderRequest, type WebSocketCtor } from '../../../packages/client/src/index.js';
import type { LiveRuntime } from '../../../src/live.js';
import { fileScope, testEngine, testGateway, testLiveGateway } from '../../support/stacks.js';

const MARKET = 'BTC-PERP';
const bid = (price: string, clientOrderId: string): OrderRequest => ({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price, clientOrderId });

const trader = deskTrader;
const ordersOf = engineOpenOrders;

describe('client order ids (one gateway)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: GatewayClient;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    alice = await trader(gw.url, engine, 'alice');
  });

  it('a retry with the same clientOrderId is refused with the first order\'s status; the engine gets one', async () => {
    const first = await alice.placeOrder(bid('50000', 'retry-1'));
    expect(first).toMatchObject({ ok: true, status: 'open' });
    const again = await alice.placeOrder(bid('50000', 'retry-1')).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(GatewayError);
    expect((again as GatewayError).status).toBe(409);
    expect((again as GatewayError).body).toMatchObject({ code: 'duplicate_client_order_id', order: { clientOrderId: 'retry-1' } });
    const party = alice.session!.party;
    expect((await ordersOf(engine, party)).filter((o) => o.clientOrderId === 'retry-1')).toHaveLength(1);
    // Once the events are in, the refusal names the order and its status, and so does the status route.
    await waitFor(async () => (await orderByClientId(alice, 'retry-1'))?.source === 'live', 5_000, 'order known live');
    const status = await orderByClientId(alice, 'retry-1');
    expect(status).toMatchObject({ source: 'live', order: { clientOrderId: 'retry-1', orderId: (first as { orderId: string }).orderId, status: 'open', market: MARKET } });
    const third = (await alice.placeOrder(bid('50001', 'retry-1')).catch((e: unknown) => e)) as GatewayError;
    expect(third.body).toMatchObject({ code: 'duplicate_client_order_id', order: { orderId: (first as { orderId: string }).orderId, status: 'open' } });
    // Cancelled: the status follows; the id stays taken.
    await alice.cancelOrder((first as { orderId: string }).orderId);
    await waitFor(async () => (await orderByClientId(alice, 'retry-1'))?.order.status === 'cancelled', 5_000, 'cancelled');
    expect(((await alice.placeOrder(bid('50002', 'retry-1')).catch((e: unknown) => e)) as GatewayError).status).toBe(409);
  });

  it('an empty clientOrderId, "." or ".." is refused 400 invalid_body before the engine (an id is 1–64 characters)', async () => {
    // "" reached the engine, which kept it as the order's id: one that could be reused at will (the
    // duplicate check skipped it) and never looked up (the status route needs 1–64 characters).
    const session = alice.session!;
    const seq = engine.engine.log.maxSeq;
    // "." and "..": a URL path segment every client (WHATWG URL, so browsers and fetch) resolves
    // away, so the status route could never be asked for them; refused as order ids are.
    for (const id of ['', '', '.', '..']) {
      const body = JSON.stringify(bid('50500', id));
      const r = await fetch(`${gw.url}/v1/orders`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(await session.headers('POST', '/v1/orders', body)) } });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ code: 'invalid_body', field: 'clientOrderId' });
    }
    expect(engine.engine.log.maxSeq).toBe(seq);
  });

  it('unknown ids are null (404); a rejected order frees its id', async () => {
    expect(await orderByClientId(alice, 'never-used')).toBeNull();
    const rejected = await alice.placeOrder(bid('50000.123456', 'rej-1'));
    expect(rejected).toMatchObject({ ok: false, code: 'invalid_price' });
    const retried = await alice.placeOrder(bid('50000', 'rej-1'));
    expect(retried).toMatchObject({ ok: true, status: 'open' });
  });

  it('two items of one batch with the same id: one reaches the engine, the other is refused 409', async () => {
    const answer = await placeOrders(alice, [bid('49000', 'twin'), bid('49001', 'twin')]);
    const outcomes = answer.results.map((r) => [r.outcome, r.status]);
    expect(outcomes).toContainEqual(['answered', 200]);
    expect(outcomes).toContainEqual(['refused', 409]);
    const refused = answer.results.find((r) => r.outcome === 'refused')!;
    expect(refused.body).toMatchObject({ code: 'duplicate_client_order_id' });
    expect((await ordersOf(engine, alice.session!.party)).filter((o) => o.clientOrderId === 'twin')).toHaveLength(1);
  });

  it('over the socket: order.status for a party the connection holds; forbidden otherwise', async () => {
    await alice.placeOrder(bid('48000', 'sock-1'));
    const party = alice.session!.party;
    const stream = new StreamClient({ client: alice, kinds: ['order.update'], party: [party], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => {} });
    const stranger = new StreamClient({ client: new GatewayClient({ baseUrl: gw.url }), kinds: ['trade'], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => {} });
    try {
      stream.start();
      stranger.start();
      await waitFor(async () => (await orderByClientId(alice, 'sock-1'))?.source === 'live', 5_000, 'known');
      const ask = (s: StreamClient, id: string) =>
        (s as unknown as { request(b: () => Promise<Record<string, unknown>>): Promise<{ kind: string; payload: Record<string, unknown> }> }).request(async () => ({ op: 'order.status', party, clientOrderId: id }));
      expect(await ask(stream, 'sock-1')).toMatchObject({ kind: 'stream.answer', payload: { status: 200, body: { source: 'live', order: { clientOrderId: 'sock-1', status: 'open' } } } });
      expect(await ask(stream, 'nope')).toMatchObject({ kind: 'stream.error', payload: { code: 'not_found', status: 404 } });
      expect(await ask(stranger, 'sock-1')).toMatchObject({ kind: 'stream.error', payload: { code: 'forbidden', status: 403 } });
    } finally {
      stream.stop();
      stranger.stop();
    }
  });

  it('order.status over the socket spends the party budget as the REST route does', async (ctx) => {
    // Uncharged, each message whose id the live path does not hold was a database read at the
    // connection's message rate, where the REST route costs a request of the party's budget.
    const budget = 3;
    const gw2 = await testLiveGateway(ctx, engine, { RATE_LIMIT_MAX: String(budget), RATE_LIMIT_IP_MAX: '100000' });
    const carol = await trader(gw2.url, engine, 'carol');
    const party = carol.session!.party;
    const stream = new StreamClient({ client: carol, kinds: ['order.update'], party: [party], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => {} });
    try {
      stream.start();
      const ask = (id: string) =>
        (stream as unknown as { request(b: () => Promise<Record<string, unknown>>): Promise<{ kind: string; payload: Record<string, unknown> }> }).request(async () => ({ op: 'order.status', party, clientOrderId: id }));
      for (let i = 0; i < budget; i++) expect(await ask(`unknown-${i}`)).toMatchObject({ kind: 'stream.error', payload: { code: 'not_found', status: 404 } });
      expect(await ask('one-too-many')).toMatchObject({ kind: 'stream.error', payload: { code: 'rate_limited', status: 429 } });
      // One budget for both paths: REST is refused too.
      expect(((await orderByClientId(carol, 'rest').catch((e: unknown) => e)) as GatewayError).status).toBe(429);
    } finally {
      stream.stop();
    }
  });

  it('after the live path forgets (a new gateway), the status comes from what the live path learns or 404', async (ctx) => {
    // A gateway without a live runtime knows only its claims: the claim holds the order the engine
    // answered, and the duplicate check and the status route both say it (ADR 0320); an id never
    // placed is 404 (no database here).
    const bare = await testGateway(ctx, { ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000' }, { listen: true, overrides: { live: null } });
    const bob = await trader(bare.url, engine, 'bob');
    const first = (await bob.placeOrder(bid('47000', 'bare-1'))) as { ok: boolean; orderId: string };
    expect(first).toMatchObject({ ok: true });
    const refused = ((await bob.placeOrder(bid('47000', 'bare-1')).catch((e: unknown) => e)) as GatewayError).body;
    expect(refused).toMatchObject({ code: 'duplicate_client_order_id', order: { clientOrderId: 'bare-1', orderId: first.orderId, status: 'open' } });
    const status = await orderByClientId(bob, 'bare-1');
    expect(status).toMatchObject({ source: 'claim', order: { clientOrderId: 'bare-1', orderId: first.orderId, status: 'open' } });
    expect(status!.order).toEqual(refused.order);
    expect(await orderByClientId(bob, 'bare-never')).toBeNull();
  });
});

describe('client order ids across replicas (two gateways, one Redis)', async () => {
  const ok = await fleetServices({ redis: true });
  it.skipIf(!ok)('the same id sent to both at once: exactly one order reaches the engine', async (ctx) => {
    const engine = await testEngine(ctx);
    const env = { REDIS_URL, REDIS_PREFIX: `${uniqueName('coid')}:`, RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' };
    const a = await testLiveGateway(ctx, engine, env);
    const b = await testLiveGateway(ctx, engine, env);
    const onA = await trader(a.url, engine, 'carol');
    const onB = new GatewayClient({ baseUrl: b.url, retry: { retries: 0 } });
    onB.session = onA.session;
    for (let i = 0; i < 5; i++) {
      const id = `race-${i}`;
      const [x, y] = await Promise.all([onA.placeOrder(bid(String(40_000 + i), id)).catch((e: unknown) => e), onB.placeOrder(bid(String(40_000 + i), id)).catch((e: unknown) => e)]);
      const statuses = [x, y].map((r) => (r instanceof GatewayError ? r.status : (r as { ok: boolean }).ok));
      expect(statuses.sort()).toEqual([409, true].sort());
      expect((await ordersOf(engine, onA.session!.party)).filter((o) => o.clientOrderId === id)).toHaveLength(1);
    }
    // Each replica follows the events: both know the order by its id.
    await waitFor(() => (a.live as LiveRuntime).clientOrder(onA.session!.party, 'race-0') !== null && (b.live as LiveRuntime).clientOrder(onA.session!.party, 'race-0') !== null, 5_000, 'both know');
  });
});
