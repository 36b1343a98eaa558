import { expectCanonicalEvents } from './canonical-events.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchRoot, userBatchRoot, ZERO_ROOT } from '../../../sandbox/engine/commitments.js';
import type { RunningEngine } from '../../../sandbox/engine/server.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { eventually } from '../../support/eventually.js';
import type { EngineEvent } from '../../../sandbox/engine/types.js';
import { adminHeaders, fundedClient, http, makeParty } from './helpers.js';

let eng: RunningEngine;
const file = fileScope();
beforeAll(async () => {
  eng = await testEngine(file);
});
const after = (seq: number): EngineEvent[] => eng.engine.log.eventsSince(seq);

describe('health and versions', () => {
  it('reports the current version and maxSeq', async () => {
    const r = await http(eng.url, 'GET', '/healthz');
    expect(r.body).toEqual({ ok: true, version: 'c879f7f', buildDate: '2026-08-01', maxSeq: eng.engine.log.maxSeq });
  });

  it('current build: market is required on the admin open-orders read and accepts all', async () => {
    const c = await fundedClient(eng.url, eng.adminToken);
    const o1 = await c.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.1', price: '1000' });
    const o2 = await c.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'limit', size: '1', price: '20' });
    const h = adminHeaders(eng.adminToken);
    const path = `/v1/admin/users/${encodeURIComponent(c.id)}/orders`;
    const none = await http(eng.url, 'GET', path, { headers: h });
    expect(none.status).toBe(400);
    expect(none.body).toEqual({ ok: false, code: 'market_required', error: expect.any(String) });
    const all = await http(eng.url, 'GET', `${path}?market=all`, { headers: h });
    expect(all.body.orders.map((o: any) => o.orderId)).toEqual([o1.body.orderId, o2.body.orderId]);
    expect(Object.keys(all.body.orders[0]).sort()).toEqual(
      ['orderId', 'party', 'market', 'side', 'type', 'tif', 'price', 'size', 'filledSize', 'avgPrice', 'status', 'reduceOnly', 'clientOrderId', 'tp', 'sl', 'createdAt', 'updatedAt', 'seq'].sort(),
    );
    const sol = await http(eng.url, 'GET', `${path}?market=SOL-PERP`, { headers: h });
    expect(sol.body.orders.map((o: any) => o.orderId)).toEqual([o2.body.orderId]);
    expect((await http(eng.url, 'GET', `${path}?market=sol-perp`, { headers: h })).body.code).toBe('market_unsupported');
    expect((await http(eng.url, 'GET', `${path}?market=all`)).status).toBe(401);
  });

  it('legacy build: older version, rejects market=all, treats a missing market as all', async (ctx) => {
    const old = await testEngine(ctx, { legacy: true });
    expect((await http(old.url, 'GET', '/healthz')).body).toEqual({ ok: true, version: '9a1e3b2', buildDate: '2026-05-10', maxSeq: 0 });
    const c = await fundedClient(old.url, old.adminToken);
    const o = await c.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.1', price: '1000' });
    const h = adminHeaders(old.adminToken);
    const all = await http(old.url, 'GET', `/v1/admin/users/${c.id}/orders?market=all`, { headers: h });
    expect(all.status).toBe(400);
    expect(all.body).toEqual({ ok: false, code: 'market_unsupported', error: expect.any(String) });
    const none = await http(old.url, 'GET', `/v1/admin/users/${c.id}/orders`, { headers: h });
    expect(none.status).toBe(200);
    expect(none.body.orders.map((x: any) => x.orderId)).toEqual([o.body.orderId]);
  });
});

describe('order book read', () => {
  it('validates depth and market', async () => {
    expect((await http(eng.url, 'GET', '/v1/orderbook')).body).toMatchObject({ market: 'BTC-PERP', depth: 20 });
    for (const q of ['depth=0', 'depth=101', 'depth=abc', 'depth=1.5']) {
      const r = await http(eng.url, 'GET', `/v1/orderbook?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.code).toBe('bad_request');
    }
    const bad = await http(eng.url, 'GET', '/v1/orderbook?market=all');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('market_unsupported');
    const c = await fundedClient(eng.url, eng.adminToken);
    await c.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '50000' });
    await c.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.02', price: '50000' });
    const o3 = await c.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '50100' });
    const placedSeq = after(0).findLast((e) => e.kind === 'engine.order_placed')!.seq;
    const b = await http(eng.url, 'GET', '/v1/orderbook?depth=1&market=BTC-PERP');
    expect(b.body).toEqual({ market: 'BTC-PERP', seq: placedSeq, depth: 1, bids: [['50100.0000000000', '0.0100000000']], asks: [] });
    await c.cancel(o3.body.orderId);
    const b2 = await http(eng.url, 'GET', '/v1/orderbook?market=BTC-PERP');
    expect(b2.body.seq).toBe(eng.engine.log.maxSeq);
    expect(b2.body.bids).toEqual([['50000.0000000000', '0.0300000000']]);
  });
});

describe('collateral', () => {
  it('deposits, faucet and withdrawals decided on the next tick', async () => {
    const c = await fundedClient(eng.url, eng.adminToken, '500');
    const h = adminHeaders(eng.adminToken, true);
    let mark = eng.engine.log.maxSeq;
    const dep = await http(eng.url, 'POST', '/v1/admin/deposit', { headers: h, body: JSON.stringify({ party: c.id, amount: '250.5', txId: 'tx-1' }) });
    expect(dep.body).toEqual({ ok: true, depositId: expect.any(String), newBalance: '750.5000000000' });
    expect(after(mark)).toEqual([
      expect.objectContaining({ kind: 'inbound.deposit', party: c.id, payload: { depositId: dep.body.depositId, amount: '250.5000000000', source: 'chain', txId: 'tx-1', newBalance: '750.5000000000' } }),
    ]);
    // A chain deposit names its chain transaction (engine contract): without one it is refused, nothing committed.
    mark = eng.engine.log.maxSeq;
    for (const txId of [undefined, null, '', 7, 'x'.repeat(129)]) {
      const bare = await http(eng.url, 'POST', '/v1/admin/deposit', { headers: h, body: JSON.stringify({ party: c.id, amount: '1', txId }) });
      expect([bare.status, bare.body.code, bare.body.error]).toEqual([400, 'bad_request', expect.stringContaining('txId')]);
    }
    expect(after(mark)).toEqual([]);
    const f = await http(eng.url, 'POST', '/v1/admin/faucet', { headers: h, body: JSON.stringify({ party: c.id, amount: '1' }) });
    expect(f.body).toEqual({ ok: true, depositId: expect.any(String), newBalance: '751.5000000000' });
    expect(after(mark)[0]!.payload).toMatchObject({ source: 'faucet', txId: null });
    expect((await http(eng.url, 'POST', '/v1/admin/faucet', { headers: h, body: JSON.stringify({ party: c.id, amount: 1 }) })).status).toBe(400);
    expect((await http(eng.url, 'POST', '/v1/admin/faucet', { headers: h, body: JSON.stringify({ party: 'nope', amount: '1' }) })).status).toBe(400);
    expect((await http(eng.url, 'POST', '/v1/admin/faucet', { body: JSON.stringify({ party: c.id, amount: '1' }) })).body).toEqual({ error: 'unauthorized' });

    mark = eng.engine.log.maxSeq;
    const w1 = await c.withdraw('700');
    const w2 = await c.withdraw('100');
    expect(w1.body).toEqual({ ok: true, withdrawalId: expect.any(String), nonce: 1 });
    expect(w2.body).toMatchObject({ ok: true, nonce: 2 });
    expect(after(mark).map((e) => [e.kind, e.payload.nonce, e.payload.amount])).toEqual([
      ['inbound.withdrawal_request', 1, '700.0000000000'],
      ['inbound.withdrawal_request', 2, '100.0000000000'],
    ]);
    mark = eng.engine.log.maxSeq;
    eng.engine.tick();
    const ev = after(mark);
    expect(ev.map((e) => e.kind)).toEqual(['engine.tick_start', 'engine.approve_submitted', 'engine.reject_submitted']);
    expect(ev[1]!.payload).toEqual({ withdrawalId: w1.body.withdrawalId, newBalance: '51.5000000000' });
    expect(ev[2]!.payload).toEqual({ withdrawalId: w2.body.withdrawalId, reason: 'insufficient_collateral' });
    expect((await c.me()).body.balance).toBe('51.5000000000');
    expect((await c.withdraw('-1')).status).toBe(400);
  });
});

describe('commitments', () => {
  it('commits per-party merkle chains and a global manifest that an indexer can recompute', async () => {
    eng.engine.commit(); // flush whatever earlier tests left
    const start = eng.engine.log.maxSeq;
    const [a, b] = await Promise.all([fundedClient(eng.url, eng.adminToken, '1000', 'ca'), fundedClient(eng.url, eng.adminToken, '1000', 'cb')]);
    await a.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'limit', size: '1', price: '100' });
    await b.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'limit', size: '1', price: '100' });
    eng.engine.tick();
    const beforeCommit = eng.engine.log.maxSeq;
    eng.engine.commit();
    const all = after(start);
    const committed = after(beforeCommit);
    // A party's batch: its own events and the fills it has a leg in (a fill event has no party).
    const hasLeg = (e: EngineEvent, party: string) => e.kind === 'engine.order_filled' && (e.payload.legs as Array<{ party: string }>).some((l) => l.party === party);
    const userEvents = (party: string): EngineEvent[] => all.filter((e) => e.seq <= beforeCommit && (e.party === party || hasLeg(e, party)));
    const parties = [a.id, b.id].sort();
    expect(committed.map((e) => e.kind)).toEqual(['engine.user_batch_committed', 'engine.user_batch_committed', 'outbound.batch_committed']);
    const roots: string[] = [];
    committed.slice(0, 2).forEach((e, i) => {
      const evs = userEvents(parties[i]!);
      expect(evs.length).toBeGreaterThanOrEqual(5); // session, deposit, inbound.order, order_placed, the fill
      expect(evs.filter((x) => x.kind === 'engine.order_filled')).toHaveLength(1);
      const root = userBatchRoot(evs);
      roots.push(root);
      expect(e).toMatchObject({ party: parties[i], payload: { userSeq: 1, root, prevRoot: ZERO_ROOT, eventCount: evs.length } });
      expect(root).toMatch(/^[0-9a-f]{64}$/);
    });
    const manifest = committed[2]!;
    expect(manifest.party).toBeUndefined();
    const prevBatches = all.filter((e) => e.kind === 'outbound.batch_committed' && e.seq < beforeCommit);
    expect(manifest.payload).toEqual({
      batchNum: expect.any(Number),
      root: batchRoot(roots),
      prevRoot: expect.stringMatching(/^[0-9a-f]{64}$/),
      userBatchCount: 2,
      firstSeq: Math.min(...parties.flatMap((p) => userEvents(p).map((e) => e.seq))),
      lastSeq: Math.max(...parties.flatMap((p) => userEvents(p).map((e) => e.seq))),
    });
    expect(prevBatches).toHaveLength(0); // commit() before `start` is outside `all`

    // Nothing new → no commitment events at all.
    const quiet = eng.engine.log.maxSeq;
    eng.engine.tick();
    eng.engine.commit();
    expect(after(quiet).map((e) => e.kind)).toEqual(['engine.tick_start']);

    // Only a acts → one user batch chained on a's previous root.
    const m2 = eng.engine.log.maxSeq;
    await a.withdraw('1');
    eng.engine.commit();
    const second = after(m2);
    const aEvents = second.filter((e) => e.party === a.id && e.kind !== 'engine.user_batch_committed');
    const aRoot = userBatchRoot(aEvents);
    expect(second.filter((e) => e.kind === 'engine.user_batch_committed').map((e) => [e.party, e.payload])).toEqual([
      [a.id, { userSeq: 2, root: aRoot, prevRoot: roots[parties.indexOf(a.id)], eventCount: 1 }],
    ]);
    const m2manifest = second.find((e) => e.kind === 'outbound.batch_committed')!;
    expect(m2manifest.payload).toEqual({ batchNum: (manifest.payload.batchNum as number) + 1, root: batchRoot([aRoot]), prevRoot: manifest.payload.root, userBatchCount: 1, firstSeq: aEvents[0]!.seq, lastSeq: aEvents[0]!.seq });
  });

  it('runs ticks and commits on timers', async (ctx) => {
    const timed = await testEngine(ctx, { tickMs: 20, commitMs: 60 });
    await http(timed.url, 'POST', '/v1/admin/faucet', { headers: adminHeaders(timed.adminToken, true), body: JSON.stringify({ party: makeParty().id, amount: '5' }) });
    const kindsOf = () => timed.engine.log.eventsSince(0).map((e) => e.kind);
    await eventually(() => kindsOf().filter((k) => k === 'engine.tick_start').length >= 4 && kindsOf().includes('outbound.batch_committed'), 'four ticks and a commitment');
    const kinds = kindsOf();
    expect(kinds.filter((k) => k === 'engine.tick_start').length).toBeGreaterThanOrEqual(4);
    expect(kinds.filter((k) => k === 'outbound.batch_committed')).toHaveLength(1);
    const ticks = timed.engine.log.eventsSince(0).filter((e) => e.kind === 'engine.tick_start').map((e) => e.payload.tick);
    expect(ticks.slice(0, 3)).toEqual([1, 2, 3]);
  });
});

describe('event encoding', () => {
  it('builds every event with sorted keys, so its JSON is already canonical', () => {
    expectCanonicalEvents(eng.engine.log.eventsSince(0));
  });
});
