// The order book poller logs changes of state, not every failed poll: an engine that is down would
// otherwise fill the log with several warnings a second.
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineClient } from '../../../src/engine/client.js';
import { OrderbookPoller } from '../../../src/engine/orderbook-poller.js';
import { okJson, startFakeEngine, type FakeEngine } from '../trading/fake-engine.js';

describe('order book poller logging', () => {
  let engine: FakeEngine;
  let client: EngineClient;
  beforeAll(async () => {
    engine = await startFakeEngine();
    client = new EngineClient({ baseUrl: engine.url, adminToken: null, timeoutMs: 1_000, connections: 4 });
  });
  afterAll(async () => {
    await client.close();
    await engine.close();
  });

  it('warns once when reads start failing and logs once when they recover', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    let down = false;
    engine.respond = (req) => {
      if (req.url.startsWith('/v1/markets')) return okJson({ markets: [{ symbol: 'BTC-PERP', status: 'active' }] });
      if (down) return { status: 503, body: '<html>down</html>' };
      return okJson({ market: 'BTC-PERP', seq: 1, bids: [], asks: [] });
    };
    const poller = new OrderbookPoller({ engine: client, depth: 5, pollMs: 50, onFrame: () => {}, logger: pino({ level: 'info' }, sink) as never });
    await poller.pollOnce();
    down = true;
    for (let i = 0; i < 20; i++) await poller.pollOnce();
    down = false;
    await poller.pollOnce();
    await poller.pollOnce();
    await new Promise((r) => setImmediate(r));
    const failed = lines.filter((l) => l.msg.includes('read failed'));
    const recovered = lines.filter((l) => l.msg.includes('succeed again'));
    expect(failed).toHaveLength(1);
    expect(failed[0]!.level).toBe(40);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ failures: 20 });
  });
});
