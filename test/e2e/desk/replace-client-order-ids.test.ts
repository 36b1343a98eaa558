// Cancel-replace and client order ids (docs/trading.md "Cancel-replace", "Client order ids"), against
// the reference engine: the new order of a replace may carry a clientOrderId; it is then found by
// it (REST and order.status) and holds it like any order (a single place, a batch item or another
// replace with it is refused 409). An id still in flight — held only by its claim, in this gateway
// or in another replica sharing Redis — is refused before the cancel is sent, so the resting order
// stays; a replace whose cancel fails frees the id it claimed.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { fleetServices, REDIS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { fileScope, testEngine, testGateway, testLiveGateway } from '../../support/stacks.js';
import { GatewayClient, GatewayError, orderByClientId, placeOrders, replaceOrder, StreamClient, type OrderRequest, type WebSocketCtor } from '../../../packages/client/src/index.js';

const MARKET = 'BTC-PERP';
const bid = (price: string, clientOrderId?: string): OrderRequest => ({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price, ...(clientOrderId ? { clientOrderId } : {}) });

async function resting(client: GatewayClient, price: string): Promise<string> {
  const placed = await client.placeOrder(bid(price));
  if (!placed.ok || !('orderId' in placed)) throw new Error(`place: ${JSON.stringify(placed)}`);
  return placed.orderId;
}

const openIds = async (engine: RunningEngine, party: string): Promise<string[]> => (await engineOpenOrders(engine, party)).map((o) => o.orderId);

describe('the new order of a cancel-replace and its clientOrderId (one gateway)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: GatewayClient;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    alice = await deskTrader(gw.url, engine, 'alice');
  });

  it('is found by its new id, and the id is then refused to a place, a batch item and another replace', async () => {
    const party = alice.session!.party;
    const old = await resting(alice, '45000');
    const replaced = await replaceOrder(alice, old, bid('45100', 'mm-new-1'));
    expect(replaced.replaced).toBe(true);
    const newId = (replaced.place.body as { orderId: string }).orderId;
    await waitFor(async () => (await orderByClientId(alice, 'mm-new-1'))?.source === 'live', 5_000, 'the new order known by its id');
    expect(await orderByClientId(alice, 'mm-new-1')).toMatchObject({ source: 'live', order: { clientOrderId: 'mm-new-1', orderId: newId, status: 'open', price: '45100.0000000000' } });
    // Over the socket too.
    const stream = new StreamClient({ client: alice, kinds: ['order.update'], party: [party], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => {} });
    try {
      stream.start();
      expect(await stream.ask('order.status', { party, clientOrderId: 'mm-new-1' })).toMatchObject({ source: 'live', order: { orderId: newId, status: 'open' } });
    } finally {
      stream.stop();
    }
    // The id is held: alone, in a batch, as another replace's new order (refused before its cancel).
    const alone = (await alice.placeOrder(bid('45200', 'mm-new-1')).catch((e: unknown) => e)) as GatewayError;
    expect(alone.body).toMatchObject({ code: 'duplicate_client_order_id', order: { clientOrderId: 'mm-new-1', orderId: newId, status: 'open' } });
    const batch = await placeOrders(alice, [bid('45300', 'mm-new-1')]);
    expect(batch.results[0]).toMatchObject({ outcome: 'refused', status: 409, body: { code: 'duplicate_client_order_id' } });
    const other = await resting(alice, '45400');
    const again = await replaceOrder(alice, other, bid('45500', 'mm-new-1'));
    expect(again).toMatchObject({ replaced: false, cancel: { outcome: 'skipped' }, place: { outcome: 'refused', status: 409, body: { code: 'duplicate_client_order_id', order: { orderId: newId } } } });
    expect(await openIds(engine, party)).toEqual(expect.arrayContaining([newId, other]));
    expect((await engineOpenOrders(engine, party)).filter((o) => o.clientOrderId === 'mm-new-1')).toHaveLength(1);
  });

  it('a replace whose cancel is not confirmed frees the id its place claimed', async () => {
    const failed = await replaceOrder(alice, 'no-such-order', bid('44000', 'mm-free-1'));
    expect(failed).toMatchObject({ replaced: false, cancel: { outcome: 'answered', body: { ok: false } }, place: { outcome: 'skipped' } });
    expect(await alice.placeOrder(bid('44000', 'mm-free-1'))).toMatchObject({ ok: true, status: 'open' });
  });

  it('two replaces with the same new id at once: one places it, the other sends nothing', async () => {
    const party = alice.session!.party;
    const [a, b] = [await resting(alice, '43000'), await resting(alice, '43100')];
    const both = await Promise.all([replaceOrder(alice, a, bid('43200', 'mm-twin')), replaceOrder(alice, b, bid('43300', 'mm-twin'))]);
    expect(both.filter((r) => r.replaced)).toHaveLength(1);
    const loser = both.find((r) => !r.replaced)!;
    expect(loser).toMatchObject({ cancel: { outcome: 'skipped' }, place: { outcome: 'refused', status: 409, body: { code: 'duplicate_client_order_id' } } });
    // The loser's resting order is still there; one order holds the id.
    const open = await engineOpenOrders(engine, party);
    expect(open.map((o) => o.orderId)).toContain(both[0]!.replaced ? b : a);
    expect(open.filter((o) => o.clientOrderId === 'mm-twin')).toHaveLength(1);
  });
});

describe('an id held only by its claim (its events not arrived)', () => {
  it('is refused before the cancel: the resting order stays', async (ctx) => {
    // A gateway without a live path knows ids only by their claims, as any replica does for the
    // moment between a place and its events.
    const engine = await testEngine(ctx);
    const bare = await testGateway(ctx, { ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000' }, { listen: true, overrides: { live: null } });
    const bob = await deskTrader(bare.url, engine, 'bob');
    const first = await bob.placeOrder(bid('42000', 'in-flight'));
    expect(first).toMatchObject({ ok: true });
    const keep = await resting(bob, '42100');
    const replaced = await replaceOrder(bob, keep, bid('42200', 'in-flight'));
    // The claim holds the order the engine answered (ADR 0320), as the status route says it.
    expect(replaced).toMatchObject({
      replaced: false,
      cancel: { outcome: 'skipped', status: null },
      place: { outcome: 'refused', status: 409, body: { code: 'duplicate_client_order_id', order: { clientOrderId: 'in-flight', orderId: (first as { orderId: string }).orderId, status: 'open' } } },
    });
    expect(await openIds(engine, bob.session!.party)).toContain(keep);
  });
});

describe('across replicas (two gateways, one Redis)', async () => {
  const ok = await fleetServices({ redis: true });
  it.skipIf(!ok)('an id placed through one replica is refused to a replace on the other before its cancel', async (ctx) => {
    const engine = await testEngine(ctx);
    const env = { REDIS_URL, REDIS_PREFIX: `${uniqueName('replcoid')}:`, RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' };
    const a = await testLiveGateway(ctx, engine, env);
    // B has not received the order's events (no live path here): only the claim in Redis tells it.
    const b = await testGateway(ctx, { ENGINE_BASE_URL: engine.url, ...env }, { listen: true, overrides: { live: null } });
    // The session is made through B, which learns it from the answer (the check needs the
    // party, so a gateway verifies the signature first); A learns it from the engine's events.
    const onB = await deskTrader(b.url, engine, 'carol');
    const onA = new GatewayClient({ baseUrl: a.url, retry: { retries: 0 } });
    onA.session = onB.session;
    await waitFor(() => a.deps.sessions.peek(onB.session!.sessionId) !== undefined, 5_000, 'A learnt the session');
    const keep = await resting(onB, '41000');
    expect(await onA.placeOrder(bid('41100', 'fleet-id'))).toMatchObject({ ok: true });
    const replaced = await replaceOrder(onB, keep, bid('41200', 'fleet-id'));
    expect(replaced).toMatchObject({ replaced: false, cancel: { outcome: 'skipped' }, place: { outcome: 'refused', status: 409, body: { code: 'duplicate_client_order_id' } } });
    const open = await engineOpenOrders(engine, onA.session!.party);
    expect(open.map((o) => o.orderId)).toContain(keep);
    expect(open.filter((o) => o.clientOrderId === 'fleet-id')).toHaveLength(1);
  });
});
