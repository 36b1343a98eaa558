// Redis going away under a running replica and coming back, on a throwaway redis-server of this
// test's own (the machine's Redis is shared by other tests and is never stopped): signed requests
// are refused with 503 while it is down, the rate limit lets requests through, and everything works
// again once it is back, without restarting the gateway.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { closedPort, fleetServices, ownRedis, waitFor } from '../../support/fleet.js';
import { okJson, startFakeEngine, type FakeEngine } from '../trading/fake-engine.js';
import pino from 'pino';

const REDIS_SERVER = '/usr/bin/redis-server';
const available = (await fleetServices({ redis: true })) && existsSync(REDIS_SERVER);

describe.skipIf(!available)('Redis down and back', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  let port: number;
  // The replica's log, as JSON lines (what an operator reads).
  const logLines: Array<{ level: number; msg: string; dependency?: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

  let redisServer: ReturnType<typeof ownRedis>;
  const startRedis = () => redisServer.start();
  const stopRedis = () => redisServer.kill();

  beforeAll(async () => {
    port = await closedPort();
    redisServer = ownRedis(port);
    await startRedis();
    engine = await startFakeEngine();
    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
    // A short signing window: a Redis started empty refuses older signatures for one window (docs/adr/0155).
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_IP_MAX: '3', REDIS_URL: `redis://127.0.0.1:${port}`, SIGNATURE_WINDOW_MS: '2000' }, { listen: true, overrides: { live: null, logger } });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
    await stopRedis();
  });

  const party = makeParty('back');
  const key = generateKeyPair();
  const sessionId = 'sess-down-and-back';
  let t = 0;
  const signedGet = async () => {
    const path = `/v1/users/${party.id}/orders`;
    t = Math.max(t + 1, Date.now());
    const res = await fetch(gw.url + path, { headers: { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${t}.${signHex(key.privateKey, `GET\n${path}\n${t}\n`)}` } });
    return { status: res.status, json: (await res.json()) as any };
  };
  const book = async () => (await fetch(`${gw.url}/v1/orderbook?market=BTC-PERP`)).status;

  it('refuses signed requests while Redis is down, lets the rate limit open, and recovers by itself', async () => {
    gw.deps.sessions.add(sessionId, party.id, key.publicKeyHex, Date.now() + 3_600_000);
    // This Redis started a moment ago: signatures are refused until its start plus the window.
    await waitFor(async () => (await signedGet()).status !== 503, 10_000, 'a Redis older than the signing window');
    expect([await book(), await book(), await book(), await book()]).toEqual([200, 200, 200, 429]);

    await stopRedis();
    const down = await signedGet();
    expect(down).toMatchObject({ status: 503, json: { code: 'shared_state_unavailable' } });
    expect([await book(), await book()]).toEqual([200, 200]); // fail open: the limit is not enforced
    // Decided at once while Redis is away, not after its next reconnection attempt (up to 2 s).
    const started = performance.now();
    for (let i = 0; i < 10; i++) {
      expect(await book()).toBe(200);
      expect((await signedGet()).status).toBe(503);
    }
    // Well under the reconnection period (2 s), even on a loaded machine: nothing waited for it.
    const perPairMs = (performance.now() - started) / 10;
    expect(perPairMs).toBeLessThan(1_000);
    // The full report names Redis; the replica probe (what the balancer routes by) does not follow it.
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${gw.url}/readyz/replica`)).status).toBe(200);

    await startRedis(); // empty: a new window, and the replay memory lost (refused for one signing window)
    await waitFor(async () => (await signedGet()).status !== 503, 10_000, 'Redis used again');
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as any;
    expect(ready.redis).toEqual({ configured: true, reachable: true });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await book());
    expect(statuses).toEqual([200, 200, 200, 429]);
    // One warning when it went, one when it came back, however many requests failed in between.
    const redisLines = logLines.filter((l) => l.dependency === 'redis').map((l) => [l.level, l.msg]);
    expect(redisLines).toEqual([
      [40, 'redis: unreachable'],
      [40, 'redis: reachable again'],
    ]);
  });
});
