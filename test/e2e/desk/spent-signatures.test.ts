// A signature the gateway calls spent is refused by the gateway itself, whether or not the engine
// saw it (docs/trading.md "Signatures are spent as single calls'"), and a cancel-replace never sends
// its cancel when its place is known to be refused (docs/trading.md "Cancel-replace"), against the
// reference engine: a batch item skipped by stopOnFailure, or a replace's place skipped because its
// cancel failed, sent again alone (REST, the socket), in another batch or in a replace, is refused
// 401 and never placed; garbage, replayed, stale, other-session and other-party places in a replace
// leave the resting order alone. Across two gateways on one Redis the same holds on the other replica.
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { fleetServices, REDIS_URL, uniqueName } from '../../support/fleet.js';
import { GatewayClient, GatewayError, localParty, placeOrders, sendBatch, signCancel, signPlace, StreamClient, type OrderRequest, type WebSocketCtor } from '../../../packages/client/src/index.js';

const bid = (price: string): OrderRequest => ({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price });
type Signed = { body: string; sig: string };

async function postJson(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** The place sent alone over REST with its own signature. */
const placeAlone = (url: string, client: GatewayClient, p: Signed) =>
  postJson(url, '/v1/orders', p.body, { 'x-user': client.session!.party, 'x-session-id': client.session!.sessionId, 'x-session-sig': p.sig });

const replace = (url: string, client: GatewayClient, cancel: { orderId: string; sig: string }, place: Signed, sessionId = client.session!.sessionId) =>
  postJson(url, '/v1/orders/replace', { user: client.session!.party, sessionId, cancel, place: { body: place.body, sig: place.sig } });

const openPrices = async (engine: RunningEngine, party: string) => (await engineOpenOrders(engine, party)).map((o) => (o as unknown as { price: string }).price);

function socketOf(client: GatewayClient): StreamClient {
  const s = new StreamClient({ client, kinds: ['order.update'], party: [client.session!.party], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => undefined });
  s.start();
  return s;
}

describe('spent signatures and replaces known to fail (one gateway)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: GatewayClient;
  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    alice = await deskTrader(gw.url, engine, 'spent');
  });

  it('a batch item skipped by stopOnFailure never places: alone (REST, socket), in a batch, in a replace', { timeout: 60_000 }, async () => {
    const session = alice.session!;
    const skippedPlaces: Signed[] = [];
    for (let i = 0; i < 4; i++) {
      const failing = await signCancel(session, `no-such-${i}`);
      const skipped = await signPlace(session, bid(String(43_000 + i)));
      const answer = await sendBatch(alice, [failing, skipped], { mode: 'ordered', stopOnFailure: true });
      expect(answer.results.map((r) => r.outcome)).toEqual(['answered', 'skipped']);
      skippedPlaces.push(skipped);
    }
    // Alone over REST.
    expect(await placeAlone(gw.url, alice, skippedPlaces[0]!)).toMatchObject({ status: 401, body: { code: 'unauthorized', error: 'signature already used (replay)' } });
    // Alone over the socket.
    const socket = socketOf(alice);
    try {
      const viaSocket = await socket.ask('order.place', { body: skippedPlaces[1]!.body, user: session.party, sessionId: session.sessionId, sig: skippedPlaces[1]!.sig }).catch((e: unknown) => e);
      expect(viaSocket).toBeInstanceOf(GatewayError);
      expect(viaSocket).toMatchObject({ status: 401, code: 'unauthorized' });
    } finally {
      socket.stop();
    }
    // In another (concurrent) batch, beside a fresh item that places.
    const fresh = await signPlace(session, bid('43100'));
    const again = await sendBatch(alice, [fresh, { op: 'place', ...skippedPlaces[2]! }]);
    expect(again.results[0]).toMatchObject({ outcome: 'answered', body: { ok: true } });
    expect(again.results[1]).toMatchObject({ outcome: 'refused', status: 401, body: { code: 'unauthorized' } });
    // In a replace: the place is refused and the cancel not sent, so the resting order stays.
    const resting = (again.results[0]!.body as { orderId: string }).orderId;
    const r = await replace(gw.url, alice, { orderId: resting, sig: (await signCancel(session, resting)).sig }, skippedPlaces[3]!);
    expect(r).toMatchObject({ status: 200, body: { cancel: { outcome: 'skipped' }, place: { outcome: 'refused', status: 401 }, replaced: false } });
    const prices = await openPrices(engine, session.party);
    expect(prices).toContain('43100.0000000000');
    for (let i = 0; i < 4; i++) expect(prices).not.toContain(`${43_000 + i}.0000000000`);
  });

  it('a replace\'s place skipped because its cancel failed never places when sent again', async () => {
    const session = alice.session!;
    const place = await signPlace(session, bid('43200'));
    const r = await replace(gw.url, alice, { orderId: 'no-such-order', sig: (await signCancel(session, 'no-such-order')).sig }, place);
    expect(r).toMatchObject({ status: 200, body: { cancel: { outcome: 'answered', body: { ok: false } }, place: { outcome: 'skipped' } } });
    expect(await placeAlone(gw.url, alice, place)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await openPrices(engine, session.party)).not.toContain('43200.0000000000');
  });

  it('a replace whose place is known to be refused never sends its cancel: the resting order stays', { timeout: 60_000 }, async () => {
    const session = alice.session!;
    const placed = await placeOrders(alice, [bid('43300')]);
    const resting = (placed.results[0]!.body as { orderId: string }).orderId;
    const cancel = async () => ({ orderId: resting, sig: (await signCancel(session, resting)).sig });
    const good = await signPlace(session, bid('43301'));
    const used = await signPlace(session, bid('43302'));
    expect(await placeAlone(gw.url, alice, used)).toMatchObject({ status: 200, body: { ok: true } });
    const stale = await signPlace(session, bid('43303'), Date.now() - 40_000);
    // Another party's session signs the place.
    const other = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
    await other.createSession(await localParty('spent-other'));
    const cases: Array<[string, Signed]> = [
      ['garbage signature', { body: good.body, sig: `${Date.now()}.${'ab'.repeat(64)}` }],
      ['malformed signature', { body: good.body, sig: 'not-a-signature' }],
      ['replayed', used],
      ['40 s old', stale],
      ['another party\'s session', await signPlace(other.session!, bid('43304'))],
    ];
    for (const [what, place] of cases) {
      const r = await replace(gw.url, alice, await cancel(), place);
      expect(r.body, what).toMatchObject({ cancel: { outcome: 'skipped' }, place: { outcome: 'refused', status: 401, body: { code: 'unauthorized' } }, replaced: false });
      expect(await openPrices(engine, session.party), what).toContain('43300.0000000000');
    }
    // The control: a good place replaces it.
    expect((await replace(gw.url, alice, await cancel(), good)).body).toMatchObject({ replaced: true });
  });
});

describe('spent signatures across two gateways sharing Redis', async () => {
  const ok = await fleetServices({ redis: true });
  it.skipIf(!ok)('an item skipped on one replica is refused by the other', { timeout: 60_000 }, async (ctx) => {
    const engine = await testEngine(ctx);
    const env = { REDIS_URL, REDIS_PREFIX: `${uniqueName('spent')}:`, RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' };
    const a = await testLiveGateway(ctx, engine, env);
    const b = await testLiveGateway(ctx, engine, env);
    const bob = await deskTrader(a.url, engine, 'spentfleet');
    const session = bob.session!;
    const skipped = await signPlace(session, bid('44000'));
    const answer = await sendBatch(bob, [await signCancel(session, 'none'), skipped], { mode: 'ordered', stopOnFailure: true });
    expect(answer.results[1]).toMatchObject({ outcome: 'skipped' });
    // b knows the session from the engine's events and refuses the spent signature itself.
    expect(await placeAlone(b.url, bob, skipped)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const fresh = await signPlace(session, bid('44001'));
    const again = await postJson(b.url, '/v1/orders/batch', { user: session.party, sessionId: session.sessionId, items: [fresh, skipped] });
    expect(again.body.results).toMatchObject([{ outcome: 'answered' }, { outcome: 'refused', status: 401 }]);
    expect(await openPrices(engine, session.party)).not.toContain('44000.0000000000');
  });
});
