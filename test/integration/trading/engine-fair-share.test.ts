// The engine client's fair share over a real HTTP server that holds its answers: one address's calls
// past its in-flight bound wait (and never reach the engine meanwhile), past its queue bound are
// refused 429 budget_exhausted at once, another address is sent at once, and a call that waits past
// its deadline answers 504 and leaves the queue (the deadline on a VirtualClock).
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EngineClient } from '../../../src/engine/client.js';
import { EngineShareExhaustedError, EngineTimeoutError } from '../../../src/engine/errors.js';
import { fromDomainError } from '../../../src/http/errors.js';
import { VirtualClock } from '../../support/virtual-clock.js';
import { eventually } from '../../support/eventually.js';

interface Held {
  path: string;
  res: ServerResponse;
}

let server: Server | null = null;
let client: EngineClient | null = null;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = null;
  client = null;
});

async function holdingEngine(): Promise<{ url: string; held: Held[] }> {
  const held: Held[] = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    held.push({ path: req.url ?? '', res });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, held };
}

async function until(check: () => boolean): Promise<void> {
  await eventually(check, { timeoutMs: 2_000 });
}

describe('EngineClient fair share', () => {
  it('holds one address to its bounds, sends another at once, and expires waiting calls on the clock', async () => {
    const { url, held } = await holdingEngine();
    const clock = new VirtualClock();
    client = new EngineClient({ baseUrl: url, adminToken: null, timeoutMs: 1_000, connections: 4, addressInFlight: 2, addressQueue: 2, clock });
    const flood = { address: '127.0.0.2', party: 'p1' };
    const outcomes: Array<Promise<unknown>> = [];
    // The fourth has a shorter deadline of its own: it expires while waiting.
    for (let i = 0; i < 5; i++) outcomes.push(client.request({ method: 'GET', path: `/a${i}`, flow: flood, ...(i === 3 ? { timeoutMs: 500 } : {}) }).catch((err: unknown) => err));
    // The fifth: two running, two waiting, refused at once.
    const refused = await outcomes[4];
    expect(refused).toBeInstanceOf(EngineShareExhaustedError);
    expect(fromDomainError(refused)?.status).toBe(429);
    expect(fromDomainError(refused)?.body()).toMatchObject({ code: 'budget_exhausted', budget: 'engine_calls' });
    await until(() => held.length === 2);
    expect(client.share.held('127.0.0.2')).toEqual({ running: 2, waiting: 2 });
    // Another address is not behind them.
    const victim = client.request({ method: 'GET', path: '/victim', flow: { address: '127.0.0.3', party: 'v' } });
    await until(() => held.some((h) => h.path === '/victim'));
    held.find((h) => h.path === '/victim')!.res.end('{"ok":true}');
    expect((await victim).status).toBe(200);
    expect(held.map((h) => h.path).sort()).toEqual(['/a0', '/a1', '/victim']);
    // One of the flood's answers frees its slot: the next waiting call is sent, in order.
    held.find((h) => h.path === '/a0')!.res.end('{}');
    expect(((await outcomes[0]) as { status: number }).status).toBe(200);
    await until(() => held.some((h) => h.path === '/a2'));
    expect(client.share.held('127.0.0.2')).toEqual({ running: 2, waiting: 1 });
    // Past its deadline the waiting call answers 504 and leaves the queue, never sent.
    await clock.advance(500);
    expect(await outcomes[3]).toBeInstanceOf(EngineTimeoutError);
    expect(client.share.held('127.0.0.2')).toEqual({ running: 2, waiting: 0 });
    // Past theirs, the calls sent answer 504 and free their slots.
    await clock.advance(500);
    for (const i of [1, 2]) expect(await outcomes[i]).toBeInstanceOf(EngineTimeoutError);
    expect(held.some((h) => h.path === '/a3')).toBe(false);
    await until(() => client!.share.running === 0);
    expect(client.share.held('127.0.0.2')).toEqual({ running: 0, waiting: 0 });
  });

  it("the gateway's own calls share as one address of their own", async () => {
    const { url, held } = await holdingEngine();
    client = new EngineClient({ baseUrl: url, adminToken: null, timeoutMs: 5_000, connections: 2, addressInFlight: 1, addressQueue: 10 });
    const flood = Array.from({ length: 5 }, (_, i) => client!.request({ method: 'GET', path: `/f${i}`, flow: { address: '10.1.1.1', party: null } }).catch(() => null));
    const health = client.request({ method: 'GET', path: '/healthz' });
    await until(() => held.some((h) => h.path === '/healthz'));
    held.find((h) => h.path === '/healthz')!.res.end('{"ok":true}');
    expect((await health).status).toBe(200);
    for (const h of held) if (!h.res.writableEnded) h.res.end('{}');
    for (let i = 0; i < 5; i++) {
      await until(() => held.some((h) => h.path === `/f${i}`));
      const h = held.find((h) => h.path === `/f${i}`)!;
      if (!h.res.writableEnded) h.res.end('{}');
    }
    await Promise.all(flood);
  });
});
