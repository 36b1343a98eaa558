// Live open orders on /v1/users/:party/orders: the mirror merged with the engine's live view, and
// the fallback to mirror rows (with the spec's log line) on every kind of live-read failure.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { FLOOR_VERSION, OLD_VERSION, startFakeEngine, type FakeEngine } from '../../support/fake-engine.js';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { A, B, captureLogger, insertFixtures, ts } from './fixtures.js';
import { fileScope, testEngine } from '../../support/stacks.js';

const LOG_TEXT = 'ordersForUser: live open-orders fetch failed';

/** The engine's view of A: o-4 has filled further, o-3 has left the book, o-11 is new. */
const liveO4 = {
  orderId: 'o-4', party: A, market: 'ETH-PERP', side: 'sell', type: 'limit', tif: 'gtc', price: '3300.0000000000', size: '2.0000000000',
  filledSize: '1.0000000000', avgPrice: '3300.0000000000', status: 'partially_filled', reduceOnly: true, clientOrderId: null, tp: null,
  sl: null, createdAt: ts(31), updatedAt: ts(48), seq: 48,
};
const liveO11 = {
  orderId: 'o-11', party: A, market: 'BTC-PERP', side: 'buy', type: 'limit', tif: 'gtc', price: '63000.0000000000', size: '0.2000000000',
  filledSize: '0.0000000000', avgPrice: null, status: 'open', reduceOnly: false, clientOrderId: 'c-11',
  tp: { triggerPrice: '70000.0000000000', limitPrice: null, size: null }, sl: null, createdAt: ts(50), updatedAt: ts(50), seq: 50,
};

let db: TestDatabase;
let fake: FakeEngine;
const open: TestGateway[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await insertFixtures(db.sql);
  fake = await startFakeEngine();
  fake.openOrders.set(A, [liveO4, liveO11]);
});
afterEach(async () => {
  fake.mode = 'ok';
  fake.requests.length = 0;
  fake.version = FLOOR_VERSION;
  fake.markets = new Set(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']);
  while (open.length) await open.pop()!.close();
});
afterAll(async () => {
  await fake?.close();
  await db?.drop();
});

async function gateway(env: Record<string, string | undefined> = {}) {
  const cap = captureLogger();
  const gw = await startGateway(
    { DATABASE_URL: db.url, AUTH_DISABLED: 'true', ENGINE_BASE_URL: fake.url, ENGINE_ADMIN_TOKEN: fake.adminToken, ...env },
    { overrides: { logger: cap.logger } },
  );
  open.push(gw);
  const get = async (query = '') => {
    const res = await gw.app.inject(`/v1/users/${A}/orders${query}`);
    return { status: res.statusCode, body: res.json() };
  };
  return { gw, get, logs: () => cap.lines().filter((l) => l.msg === LOG_TEXT) };
}

const view = (body: { items: Array<{ orderId: string; status: string; source: string }> }) => body.items.map((i) => `${i.orderId}:${i.status}:${i.source}`);

describe('against an engine at the version floor (c879f7f)', () => {
  it('replaces open mirror rows by the live view, drops rows that left the book, adds new live orders', async () => {
    const { get, logs } = await gateway();
    const res = await get();
    expect(res.status).toBe(200);
    expect(view(res.body)).toEqual(['o-11:open:engine', 'o-6:rejected:mirror', 'o-5:cancelled:mirror', 'o-4:partially_filled:engine', 'o-1:filled:mirror']);
    expect(res.body.nextCursor).toBeNull();
    const o4 = res.body.items.find((i: { orderId: string }) => i.orderId === 'o-4');
    expect(o4).toMatchObject({ filledSize: '1.0000000000', createdSeq: 31, updatedSeq: 48, createdAt: ts(31), updatedAt: ts(48), reduceOnly: true });
    expect(res.body.items[0]).toMatchObject({ createdSeq: 50, updatedSeq: 50, tpTriggerPrice: '70000.0000000000', tpLimitPrice: null, slTriggerPrice: null });
    expect(fake.requests.map((r) => [r.method, r.url, r.headers.authorization])).toEqual([
      ['GET', `/v1/admin/users/${encodeURIComponent(A)}/orders?market=all`, `Bearer ${fake.adminToken}`],
    ]);
    expect(logs()).toEqual([]);
  });

  it('asks the engine for the requested market only', async () => {
    const { get } = await gateway();
    const res = await get('?market=ETH-PERP');
    expect(view(res.body)).toEqual(['o-6:rejected:mirror', 'o-4:partially_filled:engine']);
    expect(fake.requests[0]!.url).toBe(`/v1/admin/users/${encodeURIComponent(A)}/orders?market=ETH-PERP`);
  });

  it('applies a non-terminal status filter to the live view and skips the live read for a terminal one', async () => {
    const { get } = await gateway();
    expect(view((await get('?status=open')).body)).toEqual(['o-11:open:engine']);
    expect(view((await get('?status=partially_filled')).body)).toEqual(['o-4:partially_filled:engine']);
    expect(fake.requests.length).toBe(2);
    expect(view((await get('?status=filled')).body)).toEqual(['o-1:filled:mirror']);
    expect(fake.requests.length).toBe(2);
  });

  it('pages by createdSeq without repeating or losing live orders', async () => {
    const { get } = await gateway();
    const p1 = await get('?limit=2');
    expect([view(p1.body), p1.body.nextCursor]).toEqual([['o-11:open:engine', 'o-6:rejected:mirror', 'o-5:cancelled:mirror'], 32]);
    const p2 = await get('?limit=2&before=32');
    expect([view(p2.body), p2.body.nextCursor]).toEqual([['o-4:partially_filled:engine'], 30]);
    const p3 = await get('?limit=2&before=30');
    expect([view(p3.body), p3.body.nextCursor]).toEqual([['o-1:filled:mirror'], null]);
  });

  it('a market the engine does not know (400 market_unsupported): live view empty, no failure line', async () => {
    const { get, logs } = await gateway();
    // A misspelling: the engine refuses it, the mirror has nothing there either.
    const typo = await get('?market=btc-perp');
    expect([typo.status, typo.body]).toEqual([200, { items: [], nextCursor: null }]);
    expect(fake.requests.map((r) => r.url)).toEqual([`/v1/admin/users/${encodeURIComponent(A)}/orders?market=btc-perp`]);
    // A market the mirror has rows in but the engine no longer lists: the open row is not reported
    // open (no fallback to phantom mirror rows), terminal rows stay.
    fake.markets.delete('ETH-PERP');
    expect(view((await get('?market=ETH-PERP')).body)).toEqual(['o-6:rejected:mirror']);
    expect(logs()).toEqual([]);
  });

  it('a party the engine has no open order for: its stale open mirror rows are not reported open', async () => {
    const { gw } = await gateway();
    const res = await gw.app.inject(`/v1/users/${B}/orders`);
    expect(view(res.json())).toEqual(['o-7:filled:mirror', 'o-2:filled:mirror']);
  });
});

describe('falls back to the mirror rows, logs, answers 200', () => {
  const MIRROR = ['o-6:rejected:mirror', 'o-5:cancelled:mirror', 'o-4:partially_filled:mirror', 'o-3:open:mirror', 'o-1:filled:mirror'];

  it('engine older than the floor: 400 market_unsupported', async () => {
    fake.version = OLD_VERSION;
    const { get, logs } = await gateway();
    const res = await get();
    expect(res.status).toBe(200);
    expect(view(res.body)).toEqual(MIRROR);
    expect(res.body.items.find((i: { orderId: string }) => i.orderId === 'o-4').filledSize).toBe('0.5000000000');
    expect(logs()).toMatchObject([{ level: 40, party: A, market: 'all', engineStatus: 400, engineCode: 'market_unsupported' }]);
    expect(view((await get('?status=open')).body)).toEqual(['o-3:open:mirror']);
  });

  it('old engine: a specific unknown market is not a failure, `all` (explicit or implied) still is', async () => {
    fake.version = OLD_VERSION;
    const { get, logs } = await gateway();
    expect((await get('?market=btc-perp')).body).toEqual({ items: [], nextCursor: null });
    expect(logs()).toEqual([]);
    const all = await get('?market=all');
    expect([all.status, all.body.items]).toEqual([200, []]);
    expect(logs()).toMatchObject([{ level: 40, market: 'all', engineStatus: 400, engineCode: 'market_unsupported' }]);
  });

  it('engine unreachable', async () => {
    const { get, logs } = await gateway({ ENGINE_BASE_URL: 'http://127.0.0.1:9' });
    const res = await get();
    expect([res.status, view(res.body)]).toEqual([200, MIRROR]);
    expect(logs()).toHaveLength(1);
    expect(String(logs()[0]!.reason)).toContain('unreachable');
  });

  it('engine too slow: bounded by the live-read timeout', async () => {
    fake.mode = 'slow';
    const { get, logs } = await gateway();
    const started = performance.now();
    const res = await get();
    const elapsed = performance.now() - started;
    expect([res.status, view(res.body)]).toEqual([200, MIRROR]);
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(elapsed).toBeLessThan(3_000);
    expect(String(logs()[0]!.reason)).toContain('did not answer in time');
  });

  it('engine answers 500 HTML, or a body without an order list', async () => {
    fake.mode = 'broken';
    const { get, logs } = await gateway();
    expect(view((await get()).body)).toEqual(MIRROR);
    fake.mode = 'garbage';
    expect(view((await get()).body)).toEqual(MIRROR);
    expect(logs().map((l) => l.reason)).toEqual(['engine answered HTTP 500', 'engine answered without an order list']);
  });

  it('no admin token: no engine call at all', async () => {
    const { get, logs } = await gateway({ ENGINE_ADMIN_TOKEN: undefined });
    expect(view((await get()).body)).toEqual(MIRROR);
    expect(fake.requests).toEqual([]);
    expect(logs()).toMatchObject([{ reason: 'ENGINE_ADMIN_TOKEN is not set' }]);
  });

  it('wrong admin token: the engine 401 is a failure like any other', async () => {
    const { get, logs } = await gateway({ ENGINE_ADMIN_TOKEN: 'wrong' });
    expect(view((await get()).body)).toEqual(MIRROR);
    expect(logs()).toMatchObject([{ engineStatus: 401 }]);
  });
});

describe('against the reference engine', () => {
  let current: RunningEngine;
  let legacy: RunningEngine;
  const file = fileScope();
  beforeAll(async () => {
    current = await testEngine(file);
    legacy = await testEngine(file, { legacy: true });
  });

  it('current build: the live read succeeds, stale open mirror rows are dropped, live orders are added', async () => {
    const { get, logs } = await gateway({ ENGINE_BASE_URL: current.url, ENGINE_ADMIN_TOKEN: current.adminToken });
    expect(view((await get()).body)).toEqual(['o-6:rejected:mirror', 'o-5:cancelled:mirror', 'o-1:filled:mirror']);
    // An order the engine holds but the mirror has not recorded yet.
    current.engine.deposit({ party: A, amount: '100000', txId: `0x${'a'.repeat(64)}` }, 'chain');
    const placed = current.engine.placeOrder(A, { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.1', price: '60000' }) as {
      ok: boolean;
      orderId: string;
    };
    expect(placed.ok).toBe(true);
    const res = await get();
    // This fresh engine's seqs (a handful) are below the fixture mirror's: the live order sorts by its seq.
    expect(view(res.body)).toEqual(['o-6:rejected:mirror', 'o-5:cancelled:mirror', 'o-1:filled:mirror', `${placed.orderId}:open:engine`]);
    expect(res.body.items[3]).toMatchObject({ createdSeq: current.engine.healthz().maxSeq, party: A, market: 'BTC-PERP', side: 'buy', price: '60000.0000000000', size: '0.1000000000', filledSize: '0.0000000000' });
    expect(view((await get('?market=ETH-PERP')).body)).toEqual(['o-6:rejected:mirror']);
    expect(logs()).toEqual([]);
  });

  it('legacy build: market_unsupported, fallback, log line', async () => {
    const { get, logs } = await gateway({ ENGINE_BASE_URL: legacy.url, ENGINE_ADMIN_TOKEN: legacy.adminToken });
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { orderId: string }) => i.orderId)).toEqual(['o-6', 'o-5', 'o-4', 'o-3', 'o-1']);
    expect(logs()).toMatchObject([{ engineStatus: 400, engineCode: 'market_unsupported' }]);
  });
});
