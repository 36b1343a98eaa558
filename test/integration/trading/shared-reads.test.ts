// Shared order book reads over real loopback HTTP: identical concurrent GET /v1/orderbook requests
// share one engine call, but only one that started after they arrived (src/engine/shared-read.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startFakeEngine, type FakeEngine } from './fake-engine.js';
import { eventually } from '../../support/eventually.js';

async function read(base: string, path: string): Promise<{ status: number; json: any }> {
  const res = await request(base + path);
  return { status: res.statusCode, json: await res.body.json() };
}

/**
 * Answers every book read after `delayMs` (the first call after `firstDelayMs`: long enough for
 * the requests a test sends meanwhile to reach the gateway even on a busy machine), numbering the
 * engine calls in the order they arrive.
 */
function numberedBooks(engine: FakeEngine, delayMs: number, firstDelayMs = delayMs): void {
  let calls = 0;
  engine.respond = (req) => {
    calls++;
    return { status: 200, body: { call: calls, url: req.url, bids: [], asks: [] }, delayMs: calls === 1 ? firstDelayMs : delayMs };
  };
}

const until = (cond: () => boolean) => eventually(cond, { timeoutMs: 2_500 });

describe('shared order book reads (ORDERBOOK_SHARED_READS, default on)', () => {
  let engine: FakeEngine;
  let gw: TestGateway;

  beforeAll(async () => {
    engine = await startFakeEngine();
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });
  afterEach(() => {
    engine.requests.length = 0;
  });

  it('answers 20 concurrent identical reads with two engine calls: the first alone, the rest together', async () => {
    numberedBooks(engine, 20, 500);
    const first = read(gw.url, '/v1/orderbook?depth=5&market=ETH-PERP');
    await until(() => engine.requests.length === 1);
    const rest = await Promise.all(Array.from({ length: 19 }, () => read(gw.url, '/v1/orderbook?depth=5&market=ETH-PERP')));
    expect((await first).json.call).toBe(1);
    expect(rest.every((r) => r.status === 200 && r.json.call === 2)).toBe(true);
    expect(engine.requests).toHaveLength(2);
    expect(engine.requests.map((r) => r.url)).toEqual(['/v1/orderbook?depth=5&market=ETH-PERP', '/v1/orderbook?depth=5&market=ETH-PERP']);
    const metrics = await (await request(`${gw.url}/metrics`)).body.text();
    expect(metrics).toMatch(/bff_engine_shared_reads_total\{route="GET \/v1\/orderbook"\} 18\b/);
  });

  it('never answers a request with a call that started before it arrived', async () => {
    numberedBooks(engine, 60);
    const a = read(gw.url, '/v1/orderbook?depth=20');
    await until(() => engine.requests.length === 1); // call 1 is in flight at the engine
    const b = read(gw.url, '/v1/orderbook?depth=20');
    expect((await a).json.call).toBe(1);
    const bAnswer = await b;
    expect(bAnswer.json.call).toBe(2); // a new call, sent after call 1 settled
    expect(engine.requests).toHaveLength(2);
  });

  it('does not share between different targets (depth or market)', async () => {
    numberedBooks(engine, 40);
    const answers = await Promise.all([
      read(gw.url, '/v1/orderbook?depth=5&market=ETH-PERP'),
      read(gw.url, '/v1/orderbook?depth=6&market=ETH-PERP'),
      read(gw.url, '/v1/orderbook?depth=5&market=BTC-PERP'),
    ]);
    expect(answers.map((r) => r.json.url)).toEqual([
      '/v1/orderbook?depth=5&market=ETH-PERP',
      '/v1/orderbook?depth=6&market=ETH-PERP',
      '/v1/orderbook?depth=5&market=BTC-PERP',
    ]);
    expect(engine.requests).toHaveLength(3);
  });

  it('gives every request sharing a failed call the 502, and the next read calls the engine again', async () => {
    engine.respond = () => ({ status: 200, body: { call: 1, bids: [], asks: [] }, delayMs: 500 });
    const first = read(gw.url, '/v1/orderbook?depth=7');
    await until(() => engine.requests.length === 1);
    engine.respond = () => ({ reset: true });
    const shared = await Promise.all(Array.from({ length: 5 }, () => read(gw.url, '/v1/orderbook?depth=7')));
    expect((await first).status).toBe(200);
    expect(shared.map((r) => [r.status, r.json.code])).toEqual(Array(5).fill([502, 'engine_unavailable']));
    numberedBooks(engine, 0);
    const after = await read(gw.url, '/v1/orderbook?depth=7');
    expect(after.status).toBe(200);
    expect(after.json.call).toBe(1);
  });
});

describe('shared reads behind an engine call that hangs', () => {
  it('answer 504 within ENGINE_TIMEOUT_MS of their own arrival, not after the hung call\'s timeout and then their own', async () => {
    const engine = await startFakeEngine();
    const gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000', ENGINE_TIMEOUT_MS: '1000' }, { listen: true });
    try {
      engine.respond = () => ({ hang: true });
      const first = read(gw.url, '/v1/orderbook?depth=5');
      await until(() => engine.requests.length === 1);
      // Deliberate: the second read arrives 100 ms after the hung call began (its own timeout runs from then).
      await new Promise((r) => setTimeout(r, 100));
      const waiting = await read(gw.url, '/v1/orderbook?depth=5'); // joins the call after the hung one
      expect([(await first).status, waiting.status, waiting.json.code]).toEqual([504, 504, 'engine_timeout']);
      // Told by the engine's side, not a stopwatch: once it answered, the call it joined is still
      // hanging at the engine (it has most of its own timeout to go). Without its own bound the
      // waiting read would only have answered after that call had been given up too.
      await until(() => engine.requests.length === 2 && engine.abandoned >= 1);
      expect(engine.requests.length - engine.abandoned).toBe(1);
    } finally {
      await gw.close();
      await engine.close();
    }
  });
});

describe('ORDERBOOK_SHARED_READS=false', () => {
  it('forwards every read alone', async () => {
    const engine = await startFakeEngine();
    const gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000', ORDERBOOK_SHARED_READS: 'false' }, { listen: true });
    try {
      numberedBooks(engine, 50);
      const answers = await Promise.all(Array.from({ length: 10 }, () => read(gw.url, '/v1/orderbook?depth=5')));
      expect(answers.every((r) => r.status === 200)).toBe(true);
      expect(engine.requests).toHaveLength(10);
      expect(new Set(answers.map((r) => r.json.call)).size).toBe(10);
    } finally {
      await gw.close();
      await engine.close();
    }
  });
});
