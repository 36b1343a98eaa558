// Edges of the proxy's transport: a shutdown with a request in flight, a body without a
// Content-Type, and an engine answer too large to relay.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { startGateway } from '../../support/gateway.js';
import { startFakeEngine, type FakeEngine } from './fake-engine.js';
import { eventually } from '../../support/eventually.js';

const SIGNED = { 'x-user': `alice::${'a'.repeat(64)}`, 'x-session-id': 's-1', 'x-session-sig': `1763700000000.${'b'.repeat(128)}` };

describe('graceful shutdown', () => {
  let slowEngine: Server;
  let engineUrl: string;
  let received = 0;
  beforeAll(async () => {
    // Answers every call after 500 ms, so a request is still in flight when the gateway closes.
    slowEngine = createServer((_req, res) => {
      received++;
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"market":"BTC-PERP","seq":1,"depth":20,"bids":[],"asks":[]}'), 500);
    }).listen(0, '127.0.0.1');
    await once(slowEngine, 'listening');
    engineUrl = `http://127.0.0.1:${(slowEngine.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => slowEngine.close(() => r())));

  it('finishes a keep-alive request in flight, answers it Connection: close, and closes promptly', async () => {
    const gw = await startGateway({ ENGINE_BASE_URL: engineUrl }, { listen: true });
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    const before = received;
    const pending = request(`${gw.url}/v1/orderbook`, { dispatcher: agent });
    // In flight once the engine has it (its answer is 500 ms away).
    await eventually(() => received !== before, 'the request at the engine');
    const started = Date.now();
    const closed = gw.close();
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.headers.connection).toBe('close');
    await res.body.text();
    await closed;
    expect(Date.now() - started).toBeLessThan(3_000);
    await agent.close();
  });
});

describe('bodies and answers the proxy refuses', () => {
  let engine: FakeEngine;
  let gw: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    engine = await startFakeEngine();
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_MAX: '100000' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  it('refuses a body without a Content-Type with 415, before the engine', async () => {
    engine.requests.length = 0;
    const res = await request(`${gw.url}/v1/orders/o-1`, { method: 'DELETE', headers: { ...SIGNED }, body: '{"a":1}' });
    expect(res.statusCode).toBe(415);
    expect(await res.body.json()).toEqual({ error: 'a request body needs a Content-Type (application/json)', code: 'unsupported_media_type' });
    expect(engine.requests).toHaveLength(0);
  });

  it('answers 502 engine_unavailable when the engine answer passes 8 MiB', async () => {
    engine.respond = () => ({ status: 200, body: `{"pad":"${'x'.repeat(9 * 1024 * 1024)}"}`, headers: { 'content-type': 'application/json' } });
    const res = await request(`${gw.url}/v1/orderbook`);
    expect(res.statusCode).toBe(502);
    expect(await res.body.json()).toEqual({ error: 'the engine is unreachable', code: 'engine_unavailable' });
  });
});
