// REDIS_WAIT_REPLICAS asks for more replicas than the Redis primary has (a single Redis, or both
// Sentinel replicas gone): Redis answers, but every signed call and faucet claim is refused 503 for
// want of an acknowledgement. /readyz, the full report, must say so (it said "ready" with every
// signed call refused); the replica probe does not follow it (a shared dependency). Also REDIS_URL
// pointed at a Sentinel (it answers PING, refuses SET).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { closedPort, fleetServices, tcpReachable, waitFor } from '../../support/fleet.js';
import { okJson, startFakeEngine, type FakeEngine } from '../trading/fake-engine.js';
import { eventually } from '../../support/eventually.js';

const REDIS_SERVER = '/usr/bin/redis-server';
const available = (await fleetServices({ redis: true })) && existsSync(REDIS_SERVER);

describe.skipIf(!available)('REDIS_WAIT_REPLICAS above the replicas Redis has', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  let redis: ChildProcess;

  beforeAll(async () => {
    const port = await closedPort();
    // A lone primary: no replica can acknowledge.
    redis = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(() => tcpReachable(`redis://127.0.0.1:${port}`), 10_000, 'redis-server');
    engine = await startFakeEngine();
    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_WAIT_REPLICAS: '1' }, { listen: true, overrides: { live: null } });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
    redis?.kill('SIGKILL');
  });

  it('/readyz is degraded and says the replicas do not acknowledge; signed calls 503; the replica probe stays 200', async () => {
    const party = makeParty('wait');
    const key = generateKeyPair();
    gw.deps.sessions.add('sess-wait', party.id, key.publicKeyHex, Date.now() + 3_600_000);
    const path = `/v1/users/${party.id}/orders`;
    const t = Date.now();
    const res = await fetch(gw.url + path, { headers: { 'x-user': party.id, 'x-session-id': 'sess-wait', 'x-session-sig': `${t}.${signHex(key.privateKey, `GET\n${path}\n${t}\n`)}` } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('shared_state_unavailable');

    const ready = await fetch(`${gw.url}/readyz`);
    const body = (await ready.json()) as { status: string; reasons: string[]; redis: Record<string, unknown> };
    expect(ready.status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.reasons.join('; ')).toMatch(/redis replicas: 0 of the 1 REDIS_WAIT_REPLICAS connected/);
    expect(body.redis).toMatchObject({ configured: true, reachable: true, replicas: { wanted: 1, connected: 0 } });
    expect((await fetch(`${gw.url}/readyz/replica`)).status).toBe(200);
  });
});

describe.skipIf(!available)('REDIS_URL naming a Redis Sentinel instead of a Redis server', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  let sentinel: ChildProcess;
  let dir = '';
  let port = 0;

  beforeAll(async () => {
    port = await closedPort();
    // A sentinel answers PING but no SET: every signed call would be refused while /readyz said ready.
    // Sentinel insists on a config file it can rewrite.
    dir = mkdtempSync(join(tmpdir(), 'sentinel-'));
    writeFileSync(join(dir, 'sentinel.conf'), `port ${port}\nbind 127.0.0.1\ndir ${dir}\n`);
    sentinel = spawn(REDIS_SERVER, [join(dir, 'sentinel.conf'), '--sentinel'], { stdio: 'ignore' });
    await waitFor(() => tcpReachable(`redis://127.0.0.1:${port}`), 10_000, 'redis-server --sentinel');
    engine = await startFakeEngine();
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, REDIS_URL: `redis://127.0.0.1:${port}` }, { listen: true, overrides: { live: null } });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
    sentinel?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('/readyz is degraded and names the mistake', async () => {
    const ready = await fetch(`${gw.url}/readyz`);
    const body = (await ready.json()) as { reasons: string[]; redis: { reachable: boolean; error?: string } };
    expect(ready.status).toBe(503);
    expect(body.redis.reachable).toBe(false);
    expect(body.redis.error).toMatch(/Sentinel.*REDIS_SENTINELS/);
    expect(body.reasons.join('; ')).toMatch(/redis unreachable/);
  });

  it('REDIS_SENTINELS with a name the sentinels do not monitor: /readyz names the cause, not a timeout', async () => {
    const named = await startGateway({ ENGINE_BASE_URL: engine.url, REDIS_SENTINELS: `127.0.0.1:${port}`, REDIS_SENTINEL_NAME: 'not-monitored' }, { listen: true, overrides: { live: null } });
    try {
      // Once the sentinel has answered the first connection attempt, /readyz says why.
      const body = await eventually(
        async () => {
          const b = (await (await fetch(`${named.url}/readyz`)).json()) as { redis: { reachable: boolean; error?: string } };
          return /No such master/.test(b.redis.error ?? '') && b;
        },
        { timeoutMs: 5_000, what: 'the cause (no such master) in /readyz' },
      );
      expect(body.redis.reachable).toBe(false);
      expect(body.redis.error).toMatch(/No such master with that name/);
    } finally {
      await named.close();
    }
  });
});
