// Batches and cancel-replace (docs/trading.md "Batches", "Cancel-replace") through the published
// client and over the socket, against the reference engine over real HTTP: every item signed as it
// would be alone and judged by the engine, every outcome in order, failures never hiding the
// others, stopOnFailure sending nothing after a failure, a replace never leaving both orders live.
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { http } from '../../sandbox/engine/helpers.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { connect } from '../../integration/stream/helpers.js';
import {
  GatewayClient,
  placeOrders,
  requestMessage,
  cancelOrders,
  replaceOrder,
  sendBatch,
  signCancel,
  signPlace,
  StreamClient,
  type OrderRequest,
} from '../../../packages/client/src/index.js';
import WebSocket from 'ws';
import type { BatchItem } from '../../../src/contracts/desk.js';
import { fileScope, testEngine, testGateway, testLiveGateway } from '../../support/stacks.js';

const MARKET = 'BTC-PERP';
const bid = (price: string, extra: Partial<OrderRequest> = {}): OrderRequest => ({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price, ...extra }) as OrderRequest;

const trader = (gw: TestGateway, engine: RunningEngine, hint: string) => deskTrader(gw.url, engine, hint);

async function bookBids(engine: RunningEngine): Promise<string[][]> {
  return (await http(engine.url, 'GET', `/v1/orderbook?depth=100&market=${MARKET}`)).body.bids;
}

describe('batches and cancel-replace (reference engine)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: GatewayClient;
  let bob: GatewayClient;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    alice = await trader(gw, engine, 'alice');
    bob = await trader(gw, engine, 'bob');
  });

  it('places 50 orders in one call: every outcome in order, each the engine\'s own answer', async () => {
    const orders = Array.from({ length: 50 }, (_, i) => bid(String(50_000 + i), { clientOrderId: `b50-${i}` }));
    const before = (await bookBids(engine)).length;
    const answer = await placeOrders(alice, orders);
    expect(answer.weight).toBe(5);
    expect(answer.results).toHaveLength(50);
    for (const r of answer.results) expect(r).toMatchObject({ op: 'place', outcome: 'answered', status: 200, body: { ok: true, status: 'open' } });
    expect((await bookBids(engine)).length).toBe(before + 50);
    const ids = answer.results.map((r) => (r.body as { orderId: string }).orderId);
    expect(new Set(ids).size).toBe(50);
    const cancelled = await cancelOrders(alice, ids);
    expect(cancelled.results.map((r) => r.outcome === 'answered' && r.body.ok && r.body.orderId)).toEqual(ids);
    expect((await bookBids(engine)).length).toBe(before);
  });

  it('a failing item never hides the others: bad JSON, an engine rejection, a forged signature, a success', async () => {
    const session = alice.session!;
    const good = await signPlace(session, bid('41000'));
    const rejected = await signPlace(session, bid('41000.123456')); // invalid_price: the engine's HTTP 200 ok:false
    const unknown = await signCancel(session, 'no-such-order');
    const forged = { ...(await signPlace(session, bid('41001'))), body: JSON.stringify(bid('1')) }; // signed over other bytes
    const badJson = { op: 'place' as const, body: '{not json', sig: good.sig };
    const answer = await sendBatch(alice, [badJson, rejected, good, unknown, forged]);
    const r = answer.results;
    expect(r[0]).toMatchObject({ op: 'place', outcome: 'refused', status: 400, body: { code: 'bad_request' } });
    expect(r[1]).toMatchObject({ op: 'place', outcome: 'answered', status: 200, body: { ok: false, code: 'invalid_price' } });
    expect(r[2]).toMatchObject({ op: 'place', outcome: 'answered', status: 200, body: { ok: true, status: 'open' } });
    expect(r[3]).toMatchObject({ op: 'cancel', outcome: 'answered', body: { ok: false } });
    expect(r[4]).toMatchObject({ op: 'place', outcome: 'refused', status: 401, body: { code: 'unauthorized' } });
    expect(await bookBids(engine)).toContainEqual(['41000.0000000000', '0.0100000000']);
    expect(await bookBids(engine)).not.toContainEqual(['1.0000000000', '0.0100000000']);
  });

  it('a concurrent batch mixing places with and without client order ids: every outcome in order, a twin id refused 409, the answered ones refused when sent again, each settled from entries made while the engine worked', async () => {
    // Places with a client order id are claimed first (a promise), the others reach the engine
    // client at once (ADR 0188); the replay entries are made before the answers: the answer must not
    // tell any of it apart from a batch of single calls.
    const session = alice.session!;
    const n = 24;
    const twinAt = 10; // its twin is item 1
    const badAt = 15;
    const forgedAt = 16;
    const items: BatchItem[] = [];
    for (let i = 0; i < n; i++) {
      const price = String(38_000 + i);
      if (i === 1 || i === twinAt) items.push(await signPlace(session, bid(price, { clientOrderId: 'chunk-twin' })));
      else if (i === badAt) items.push({ op: 'place', body: '{not json', sig: (await signPlace(session, bid(price))).sig });
      else if (i === forgedAt) items.push({ ...(await signPlace(session, bid(price))), body: JSON.stringify(bid('2')) });
      else if (i % 3 === 0) items.push(await signPlace(session, bid(price, { clientOrderId: `chunk-${i}` })));
      else items.push(await signPlace(session, bid(price)));
    }
    const answer = await sendBatch(alice, items);
    expect(answer.results).toHaveLength(n);
    answer.results.forEach((r, i) => {
      if (i === twinAt) expect(r).toMatchObject({ op: 'place', outcome: 'refused', status: 409, body: { code: 'duplicate_client_order_id' } });
      else if (i === badAt) expect(r).toMatchObject({ op: 'place', outcome: 'refused', status: 400, body: { code: 'bad_request' } });
      else if (i === forgedAt) expect(r).toMatchObject({ op: 'place', outcome: 'refused', status: 401 });
      else expect(r).toMatchObject({ op: 'place', outcome: 'answered', status: 200, body: { ok: true, status: 'open' } });
    });
    // Each answered item is the engine's answer to that very item: its order rests at the item's price.
    const bids = await bookBids(engine);
    answer.results.forEach((r, i) => {
      if (r.outcome === 'answered') expect(bids).toContainEqual([`${38_000 + i}.0000000000`, '0.0100000000']);
    });
    expect(bids).not.toContainEqual([`${38_000 + twinAt}.0000000000`, '0.0100000000']);
    // Sent again, the answered ones are refused as replays (that the gateway spent them before the
    // answer, not only the engine, is the budget test below).
    const again = await sendBatch(alice, items.filter((_, i) => answer.results[i]!.outcome === 'answered'));
    for (const r of again.results) expect(r).toMatchObject({ outcome: 'refused', status: 401, body: { code: 'unauthorized' } });
    await cancelOrders(alice, answer.results.flatMap((r) => (r.outcome === 'answered' ? [(r.body as { orderId: string }).orderId] : [])));
  });

  it('ordered with stopOnFailure: items after the first failure are skipped and never reach the engine', async () => {
    const session = alice.session!;
    const first = await signPlace(session, bid('42000'));
    const failing = await signCancel(session, 'no-such-order');
    const third = await signPlace(session, bid('42001'));
    const answer = await sendBatch(alice, [first, failing, third], { mode: 'ordered', stopOnFailure: true });
    expect(answer.results.map((r) => r.outcome)).toEqual(['answered', 'answered', 'skipped']);
    expect(answer.results[2]).toEqual({ op: 'place', outcome: 'skipped', status: null, body: null });
    const bids = await bookBids(engine);
    expect(bids).toContainEqual(['42000.0000000000', '0.0100000000']);
    expect(bids).not.toContainEqual(['42001.0000000000', '0.0100000000']);
  });

  it('ordered without stopOnFailure sends every item one after the other', async () => {
    const session = alice.session!;
    const items = [await signPlace(session, bid('43000')), await signCancel(session, 'nope'), await signPlace(session, bid('43001'))];
    const answer = await sendBatch(alice, items, { mode: 'ordered' });
    expect(answer.results.map((r) => r.outcome === 'answered' && r.body.ok)).toEqual([true, false, true]);
  });

  it('refuses a malformed batch with 400 and a code, sending nothing', async () => {
    const session = alice.session!;
    const item = await signPlace(session, bid('44000'));
    const post = (body: unknown) =>
      request(`${gw.url}/v1/orders/batch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as { code: string } }));
    const base = { user: session.party, sessionId: session.sessionId };
    const requests = engine.engine.log.maxSeq;
    expect(await post({ ...base, items: [] })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post({ ...base, items: Array.from({ length: 51 }, () => item) })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post({ ...base, items: [item], stopOnFailure: true })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post({ ...base, items: [{ op: 'modify', sig: item.sig }] })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post({ items: [item] })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post({ ...base, items: [item], extra: 1 })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(engine.engine.log.maxSeq).toBe(requests);
  });

  it('one party per batch: an item naming a signer of its own is refused with 400 mixed_parties, over REST and the socket, nothing sent', async () => {
    const session = alice.session!;
    const mine = await signPlace(session, bid('44100'));
    const bobs = await signPlace(bob.session!, bid('44101'));
    const post = (path: string, body: unknown) =>
      request(`${gw.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> }));
    const seq = engine.engine.log.maxSeq;
    const mixed = { user: session.party, sessionId: session.sessionId, items: [mine, { ...bobs, user: bob.session!.party, sessionId: bob.session!.sessionId }] };
    const refused = await post('/v1/orders/batch', mixed);
    expect(refused).toMatchObject({ status: 400, body: { code: 'mixed_parties', item: 1, field: 'user' } });
    expect(refused.body.error).toMatch(/one party per call.*send one batch per party/);
    expect(await post('/v1/orders/batch', { ...mixed, items: [{ ...mine, party: session.party }] })).toMatchObject({ status: 400, body: { code: 'mixed_parties', item: 0, field: 'party' } });
    const replace = { user: session.party, sessionId: session.sessionId, cancel: { orderId: 'o-1', sig: mine.sig }, place: { body: bobs.body, sig: bobs.sig, sessionId: bob.session!.sessionId } };
    expect(await post('/v1/orders/replace', replace)).toMatchObject({ status: 400, body: { code: 'mixed_parties', item: 'place', field: 'sessionId' } });
    const raw = await connect(gw.url);
    raw.ws.send(JSON.stringify({ op: 'order.batch', id: 8, ...mixed }));
    await raw.waitFor((ms) => ms.some((m) => m.kind === 'stream.error'));
    expect(raw.messages.find((m) => m.kind === 'stream.error')).toMatchObject({ id: 8, op: 'order.batch', payload: { code: 'mixed_parties', status: 400, item: 1, field: 'user' } });
    raw.ws.close();
    expect(engine.engine.log.maxSeq).toBe(seq);
  });

  it('refuses an envelope value of the wrong type with 400 naming it, never coerced (REST as the socket)', async () => {
    // Fastify's Ajv coerces ("true" → true, 1 → true, ["ordered"] → "ordered", 12345 → "12345"):
    // a type mistake would change what the batch does instead of being refused.
    const session = alice.session!;
    const post = (path: string, body: unknown) =>
      request(`${gw.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as { code: string; error: string } }));
    const base = { user: session.party, sessionId: session.sessionId };
    const seq = engine.engine.log.maxSeq;
    const cases: [string, Record<string, unknown>][] = [
      ['stopOnFailure', { ...base, mode: 'ordered', stopOnFailure: 'true' }],
      ['stopOnFailure', { ...base, mode: 'ordered', stopOnFailure: 1 }],
      ['mode', { ...base, mode: ['ordered'] }],
      ['user', { user: 12345, sessionId: session.sessionId }],
    ];
    for (const [field, envelope] of cases) {
      const answer = await post('/v1/orders/batch', { ...envelope, items: [await signPlace(session, bid('40500'))] });
      expect(answer).toMatchObject({ status: 400, body: { code: 'bad_request' } });
      expect(answer.body.error).toContain(field);
    }
    const item = await signPlace(session, bid('40501'));
    // An item's error is the branch its op names: a cancel's long orderId, not "body is required" (the place branch).
    const longId = await post('/v1/orders/batch', { ...base, items: [{ op: 'cancel', orderId: 'x'.repeat(65), sig: item.sig }] });
    expect(longId).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(longId.body.error).toContain('orderId');
    const unknownOp = await post('/v1/orders/batch', { ...base, items: [{ op: 'modify', orderId: 'o-1', sig: item.sig }] });
    expect(unknownOp).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(unknownOp.body.error).toContain('op');
    const replace = await post('/v1/orders/replace', { ...base, cancel: { orderId: 12345, sig: item.sig }, place: { body: item.body, sig: item.sig } });
    expect(replace).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(replace.body.error).toContain('orderId');
    expect(engine.engine.log.maxSeq).toBe(seq);
  });

  it('a signature is spent once, across batches and single calls', async () => {
    const item = await signPlace(alice.session!, bid('45000'));
    const first = await sendBatch(alice, [item]);
    expect(first.results[0]).toMatchObject({ outcome: 'answered', body: { ok: true } });
    const again = await sendBatch(alice, [item]);
    expect(again.results[0]).toMatchObject({ outcome: 'refused', status: 401, body: { code: 'unauthorized' } });
    const single = await request(`${gw.url}/v1/orders`, {
      method: 'POST',
      body: item.body,
      headers: { 'content-type': 'application/json', 'x-user': alice.session!.party, 'x-session-id': alice.session!.sessionId, 'x-session-sig': item.sig },
    });
    expect(single.statusCode).toBe(401);
    await single.body.dump();
  });

  it('every item of a concurrent batch is spent before the answer, accepted or not: resent alone, it charges no party budget', async (ctx) => {
    // A spent signature proves nothing a second time: resent, it is counted under the address only
    // (the engine refuses it). Items 2..n are spent after their answers: on the engine's 2xx (it
    // verified the same bytes), else by the gateway's own check (the unknown order's cancel).
    const budget = 8;
    const gw2 = await testLiveGateway(ctx, engine, { RATE_LIMIT_MAX: String(budget), RATE_LIMIT_IP_MAX: '100000' });
    const carol = await trader(gw2, engine, 'carol');
    const session = carol.session!;
    const items = [await signPlace(session, bid('44000')), await signPlace(session, bid('44001')), await signCancel(session, 'no-such-order'), await signPlace(session, bid('44002'))];
    const batch = await sendBatch(carol, items);
    expect(batch.weight).toBe(1);
    expect([0, 1, 3].map((i) => (batch.results[i]!.body as { ok: boolean }).ok)).toEqual([true, true, true]);
    expect((batch.results[2]!.body as { ok?: boolean } | null)?.ok).not.toBe(true);
    const alone = (sig: string, method: string, path: string, body?: string) =>
      request(`${gw2.url}${path}`, { method, body, headers: { 'content-type': 'application/json', 'x-user': session.party, 'x-session-id': session.sessionId, 'x-session-sig': sig } });
    for (const item of items) {
      const r = item.op === 'cancel' ? await alone(item.sig, 'DELETE', `/v1/orders/${item.orderId}`) : await alone(item.sig, 'POST', '/v1/orders', item.body);
      expect(r.statusCode).toBe(401); // the engine's replay refusal
      await r.body.dump();
    }
    // The batch spent one request of the budget, the resends none: budget − 1 fresh orders pass.
    let passed = 0;
    for (let i = 0; i < budget; i++) {
      const order = await signPlace(session, bid(String(43_000 + i)));
      const r = await alone(order.sig, 'POST', '/v1/orders', order.body);
      await r.body.dump();
      if (r.statusCode === 429) break;
      expect(r.statusCode).toBe(200);
      passed++;
    }
    expect(passed).toBe(budget - 1);
  });

  it('carries RateLimit-* headers on every trading answer, a batch spending its weight', async () => {
    const one = await request(`${gw.url}/v1/orders/x`, { method: 'DELETE' });
    await one.body.dump();
    expect(one.statusCode).toBe(401);
    expect(one.headers['ratelimit-limit']).toBe('100000');
    const before = Number(one.headers['ratelimit-remaining']);
    const session = alice.session!;
    const items = [];
    for (let i = 0; i < 25; i++) items.push(await signCancel(session, `none-${i}`));
    const batch = await request(`${gw.url}/v1/orders/batch`, {
      method: 'POST',
      body: JSON.stringify({ user: session.party, sessionId: session.sessionId, items }),
      headers: { 'content-type': 'application/json' },
    });
    const body = (await batch.body.json()) as { weight: number };
    expect(body.weight).toBe(3);
    expect(Number(batch.headers['ratelimit-remaining'])).toBe(before - 3);
    expect(batch.headers['ratelimit-reset']).toBeDefined();
  });

  it('cancel-replace: the new order only once the old one is cancelled; already filled → the place is skipped', async () => {
    const placed = await alice.placeOrder(bid('46000'));
    if (!placed.ok || !('orderId' in placed)) throw new Error('place');
    const replaced = await replaceOrder(alice, placed.orderId, bid('46100'));
    expect(replaced.replaced).toBe(true);
    expect(replaced.cancel).toMatchObject({ op: 'cancel', outcome: 'answered', body: { ok: true, orderId: placed.orderId, status: 'cancelled' } });
    expect(replaced.place).toMatchObject({ op: 'place', outcome: 'answered', body: { ok: true, status: 'open' } });
    const bids = await bookBids(engine);
    expect(bids).toContainEqual(['46100.0000000000', '0.0100000000']);
    expect(bids).not.toContainEqual(['46000.0000000000', '0.0100000000']);

    // Already filled: bob sells into it first; the cancel answers ok:false and nothing new is placed.
    const resting = await alice.placeOrder(bid('70000'));
    if (!resting.ok || !('orderId' in resting)) throw new Error('place');
    const sold = await bob.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.01', price: '70000', tif: 'ioc' });
    expect(sold).toMatchObject({ ok: true, status: 'filled' });
    const late = await replaceOrder(alice, resting.orderId, bid('47000'));
    expect(late.replaced).toBe(false);
    expect(late.cancel).toMatchObject({ outcome: 'answered', body: { ok: false, code: 'order_not_open' } });
    expect(late.place).toEqual({ op: 'place', outcome: 'skipped', status: null, body: null });
    expect(await bookBids(engine)).not.toContainEqual(['47000.0000000000', '0.0100000000']);
  });

  it('cancel-replace whose new order the gateway refuses sends nothing: the resting order stays', async () => {
    // The gateway itself refuses the place (not JSON, not the order shape, a clientOrderId already
    // used): sending the cancel first would leave the trader with neither order.
    const session = alice.session!;
    const used = await alice.placeOrder(bid('45500', { clientOrderId: 'replace-used' }));
    expect(used).toMatchObject({ ok: true });
    const resting = await alice.placeOrder(bid('45600'));
    if (!resting.ok || !('orderId' in resting)) throw new Error('place');
    const signedBody = async (body: string) => {
      const ts = await session.nextTs();
      return { body, sig: `${ts}.${await session.signature(requestMessage('POST', '/v1/orders', ts, body))}` };
    };
    const cases: [string, string][] = [
      ['{not json', 'bad_request'],
      [JSON.stringify({ ...bid('45700'), evil: 1 }), 'invalid_body'],
      [JSON.stringify({ ...bid('45700'), size: 1 }), 'invalid_body'],
      [JSON.stringify(bid('45700', { clientOrderId: 'replace-used' })), 'duplicate_client_order_id'],
    ];
    for (const [body, code] of cases) {
      const cancel = await signCancel(session, resting.orderId);
      const answer = await request(`${gw.url}/v1/orders/replace`, {
        method: 'POST',
        body: JSON.stringify({ user: session.party, sessionId: session.sessionId, cancel: { orderId: cancel.orderId, sig: cancel.sig }, place: await signedBody(body) }),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.statusCode).toBe(200);
      expect(await answer.body.json()).toMatchObject({ cancel: { op: 'cancel', outcome: 'skipped', status: null, body: null }, place: { op: 'place', outcome: 'refused', body: { code } }, replaced: false });
      expect((await engineOpenOrders(engine, session.party)).map((o) => o.orderId)).toContain(resting.orderId);
    }
  });

  it('over the socket: order.batch and order.replace answer what REST answers', async () => {
    const stream = new StreamClient({ client: alice, kinds: ['trade'], WebSocket: WebSocket as never, onMessage: () => {} });
    try {
      stream.start();
      const batch = await placeOrders(alice, [bid('48000'), bid('48000.123456')], { sender: stream.sender });
      expect(batch.results.map((r) => r.outcome === 'answered' && r.body.ok)).toEqual([true, false]);
      const id = (batch.results[0]!.body as { orderId: string }).orderId;
      const replaced = await replaceOrder(alice, id, bid('48100'), { sender: stream.sender });
      expect(replaced.replaced).toBe(true);
      // A refused batch is a stream.error with the REST code.
      const raw = await connect(gw.url);
      raw.ws.send(JSON.stringify({ op: 'order.batch', id: 7, user: alice.session!.party, sessionId: alice.session!.sessionId, items: [] }));
      await raw.waitFor((ms) => ms.some((m) => m.kind === 'stream.error'));
      expect(raw.messages.find((m) => m.kind === 'stream.error')).toMatchObject({ id: 7, op: 'order.batch', payload: { code: 'bad_request', status: 400 } });
      raw.ws.close();
    } finally {
      stream.stop();
    }
  });
});

describe('a batch charges the party its envelope names, and only that party', () => {
  it('another party\'s signed item in it is refused by the engine and spends none of that party\'s budget', async (ctx) => {
    const engine = await testEngine(ctx);
    const budget = 3;
    const gw = await testGateway(ctx, { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, RATE_LIMIT_MAX: String(budget), RATE_LIMIT_IP_MAX: '1000' }, { listen: true, overrides: { live: null } });
    const carol = await trader(gw, engine, 'carol');
    const dave = await trader(gw, engine, 'dave');
    // Carol's batch carries one of her orders and one Dave signed: sent as Carol's call (her
    // X-User and session), Dave's signature does not verify at the engine.
    const daves = await signPlace(dave.session!, bid('32000'));
    const answer = await sendBatch(carol, [await signPlace(carol.session!, bid('32001')), daves]);
    expect(answer.weight).toBe(1);
    expect(answer.results[0]).toMatchObject({ outcome: 'answered', body: { ok: true } });
    expect(answer.results[1]).toMatchObject({ outcome: 'refused', status: 401 });
    // Carol's budget paid the batch (one left of three after two more orders); Dave's is whole.
    const placeAll = async (c: GatewayClient, n: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = await sendBatch(c, [await signPlace(c.session!, bid(String(33_000 + i)))]).then(
          () => 200,
          (err: { status?: number }) => err.status ?? 0,
        );
        statuses.push(r);
      }
      return statuses;
    };
    expect(await placeAll(dave, budget + 1)).toEqual([200, 200, 200, 429]);
    expect(await placeAll(carol, budget)).toEqual([200, 200, 429]);
  });
});

describe('a batch over the party budget sends nothing', () => {
  it('weight 2 with one request left: 429 before any item reaches the engine', async (ctx) => {
    const engine = await testEngine(ctx);
    const gw = await testGateway(ctx, { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, RATE_LIMIT_MAX: '6', RATE_LIMIT_IP_MAX: '1000' }, { listen: true, overrides: { live: null } });
    const c = await trader(gw, engine, 'carol');
    const first = await placeOrders(c, Array.from({ length: 50 }, (_, i) => bid(String(30_000 + i)))); // weight 5 of 6
    expect(first.results.every((r) => r.outcome === 'answered')).toBe(true);
    const seq = engine.engine.log.maxSeq;
    await expect(placeOrders(c, Array.from({ length: 11 }, (_, i) => bid(String(31_000 + i))))).rejects.toMatchObject({ status: 429, body: { code: 'rate_limited' } });
    expect(engine.engine.log.maxSeq).toBe(seq);
  });
});
