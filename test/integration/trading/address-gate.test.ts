// The bound on one address's trading requests in progress (TRADING_ADDRESS_IN_PROGRESS, ADR 0310)
// over real loopback HTTP, with an engine that holds its answers: the request past the bound is
// refused 429 budget_exhausted `requests_in_progress` before it reaches the engine or spends the
// address's budget, another address is served meanwhile, and the address is served again once its
// requests are answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.js';
import { httpFrom } from '../../support/http-from.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const BOUND = 3;
const HELD_MS = 1_500;

describe('requests in progress per client address', () => {
  let gw: TestGateway;
  let engine: FakeEngine;
  beforeAll(async () => {
    engine = await startFakeEngine();
    // Markets M0… and G0…: held by the engine for HELD_MS; anything else answered at once.
    engine.respond = (req) => (/market=[MG]\d/.test(req.url) ? { status: 200, body: { bids: [], asks: [] }, delayMs: HELD_MS } : okJson({ bids: [], asks: [] }));
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, TRADING_ADDRESS_IN_PROGRESS: String(BOUND), ORDERBOOK_SHARED_READS: 'false', RATE_LIMIT_IP_MAX: '100' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  it('refuses the request past the bound at once while another address is served, and serves it again once answered', async () => {
    const held = Array.from({ length: BOUND }, (_, i) => httpFrom('127.0.0.2', `${gw.url}/v1/orderbook?depth=1&market=M${i}`, 'GET'));
    await eventually(() => engine.requests.length >= BOUND, 'the held requests at the engine');
    expect(engine.requests).toHaveLength(BOUND);

    const refused = await httpFrom('127.0.0.2', `${gw.url}/v1/orderbook?depth=2&market=X`, 'GET');
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: 'budget_exhausted', budget: 'requests_in_progress', retryAfterS: 1 });
    expect(refused.headers['retry-after']).toBe('1');
    // Refused before the rate limit: nothing of the address's budget spent, and never sent.
    expect(refused.headers['ratelimit-remaining']).toBeUndefined();
    expect(engine.requests).toHaveLength(BOUND);

    const other = await httpFrom('127.0.0.3', `${gw.url}/v1/orderbook?depth=2&market=X`, 'GET');
    expect(other.status).toBe(200);

    const answered = await Promise.all(held);
    expect(answered.map((a) => a.status)).toEqual(Array(BOUND).fill(200));
    const again = await httpFrom('127.0.0.2', `${gw.url}/v1/orderbook?depth=2&market=Y`, 'GET');
    expect(again.status).toBe(200);
    // The address's budget: its BOUND held requests and this one, not the refused one.
    expect(Number(again.headers['ratelimit-remaining'])).toBe(100 - BOUND - 1);
  });

  it('frees the place of a request whose client went away before its answer', async () => {
    const { request } = await import('node:http');
    const before = engine.requests.length;
    const gone = Array.from({ length: BOUND }, (_, i) => {
      const req = request(`${gw.url}/v1/orderbook?depth=1&market=G${i}`, { localAddress: '127.0.0.4', agent: false });
      req.on('error', () => undefined);
      req.end();
      return req;
    });
    await eventually(() => engine.requests.length >= before + BOUND, 'the requests at the engine');
    expect((await httpFrom('127.0.0.4', `${gw.url}/v1/orderbook?depth=2&market=Z`, 'GET')).status).toBe(429);
    for (const req of gone) req.destroy();
    await eventually(async () => (await httpFrom('127.0.0.4', `${gw.url}/v1/orderbook?depth=2&market=Z`, 'GET')).status === 200, 'the address served again (200)');
  });
});
