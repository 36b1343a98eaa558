// The probe's sequence (issue 30): a signed GET accepted, Redis killed, a fresh empty Redis started on
// the same address, the identical signed GET replayed within the signing window. Without more, the
// empty memory accepts it a second time. Every replica must notice the loss and refuse every signature
// timestamped before it plus the window (503 shared_state_unavailable), and accept fresh signatures
// afterwards. On a throwaway redis-server of this test's own; SIGNATURE_WINDOW_MS shortens the window.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Redis } from 'ioredis';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { closedPort, fleetServices, ownRedis, waitFor } from '../../support/fleet.js';
import { eventually } from '../../support/eventually.js';
import { okJson, startFakeEngine, type FakeEngine } from '../trading/fake-engine.js';

const REDIS_SERVER = '/usr/bin/redis-server';
const available = (await fleetServices({ redis: true })) && existsSync(REDIS_SERVER);
// Long enough that Redis, the fake engine and two gateways start within it on a loaded machine (the
// first test's request must still fall inside it: 5 s did not, once, with three files at once).
const WINDOW_MS = 10_000;

describe.skipIf(!available)('the replay memory lost with Redis', { timeout: 6 * WINDOW_MS }, () => {
  let engine: FakeEngine;
  let a: TestGateway;
  let b: TestGateway;
  let port: number;
  const logLines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

  let redisServer: ReturnType<typeof ownRedis>;
  const startRedis = () => redisServer.start();
  const stopRedis = () => redisServer.kill();

  const party = makeParty('lost');
  const key = generateKeyPair();
  const sessionId = 'sess-replay-memory-lost';
  const path = `/v1/users/${party.id}/orders`;
  const sign = (ts: number) => ({ 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${ts}.${signHex(key.privateKey, `GET\n${path}\n${ts}\n`)}` });
  let last = 0;
  const freshTs = () => (last = Math.max(last + 1, Date.now()));
  const get = async (gw: TestGateway, headers: Record<string, string>) => {
    const res = await fetch(gw.url + path, { headers });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as any };
  };

  let env: Record<string, string>;
  beforeAll(async () => {
    port = await closedPort();
    redisServer = ownRedis(port);
    await startRedis();
    engine = await startFakeEngine();
    engine.respond = () => okJson([]);
    env = { ENGINE_BASE_URL: engine.url, REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: `lost-${process.pid}:`, SIGNATURE_WINDOW_MS: String(WINDOW_MS) };
    a = await startGateway(env, { listen: true, overrides: { live: null, logger } });
    b = await startGateway(env, { listen: true, overrides: { live: null } });
    for (const gw of [a, b]) gw.deps.sessions.add(sessionId, party.id, key.publicKeyHex, Date.now() + 3_600_000);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await engine?.close();
    await stopRedis();
  });

  it('a Redis up for less than the window refuses signatures from before its start plus the window', async () => {
    // This Redis started a moment ago: whatever it held before was lost then.
    const first = await get(a, sign(freshTs()));
    expect(first).toMatchObject({ status: 503, json: { code: 'shared_state_unavailable' } });
    expect(first.json.error).toMatch(/was lost/);
    await waitFor(async () => (await get(a, sign(freshTs()))).status === 200, 3 * WINDOW_MS, 'a fresh signature accepted');
  });

  it('a replay after Redis restarted empty is refused by every replica, a fresh signature after the window passes', async () => {
    // Both replicas have used the memory (and know its marker).
    expect((await get(b, sign(freshTs()))).status).toBe(200);
    const ts = freshTs();
    const headers = sign(ts);
    expect((await get(a, headers)).status).toBe(200);
    expect((await get(b, headers)).json.error).toMatch(/replay/);

    await stopRedis();
    await startRedis();
    // The identical request, until the replica's connection is back (meanwhile 503 for Redis being
    // down). Each replica reconnects on its own backoff, so each is asked until it answers.
    const seen: number[] = [];
    const untilReconnected = (gw: TestGateway) =>
      eventually(
        async () => {
          const answer = await get(gw, headers);
          const down = answer.status === 503 && !/was lost/.test(answer.json.error) && Date.now() - ts < WINDOW_MS - 500;
          if (down) seen.push(answer.status);
          return !down && answer;
        },
        { timeoutMs: WINDOW_MS, everyMs: 50, what: "the replica's Redis connection back" },
      );
    const replay = await untilReconnected(a);
    // Still inside the window: without the loss check the empty memory would accept it (200).
    expect(Date.now() - ts).toBeLessThan(WINDOW_MS);
    expect(replay.status).toBe(503);
    expect(replay.json).toMatchObject({ code: 'shared_state_unavailable', retryAfterS: expect.any(Number) });
    expect(replay.json.error).toMatch(/was lost/);
    expect(Number(replay.retryAfter)).toBeGreaterThanOrEqual(1);
    // The other replica, which noticed nothing yet, refuses it too.
    const onB = await untilReconnected(b);
    expect(onB).toMatchObject({ status: 503, json: { code: 'shared_state_unavailable' } });
    expect(onB.json.error).toMatch(/was lost/);
    expect(seen.every((s) => s === 503)).toBe(true);

    // Reported while it lasts: /readyz (without making the replica unready), a metric, a warning.
    const ready = await fetch(`${b.url}/readyz`);
    const body = (await ready.json()) as any;
    expect(Date.parse(body.redis.replayMemory.refusingSignedBefore)).toBeGreaterThan(Date.now());
    expect(body.reasons ?? []).not.toContainEqual(expect.stringMatching(/replay/));
    for (const gw of [a, b]) {
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).toMatch(/^bff_replay_memory_lost_total 1$/m);
      expect(metrics).toMatch(/^bff_replay_memory_refusing 1$/m);
    }
    expect(logLines.some((l) => l.level === 40 && /replay memory was lost/.test(l.msg))).toBe(true);

    // A fresh signature inside the window is refused as well (the memory cannot vouch for its
    // neighbours); once the window has passed, a fresh one is accepted and the report is gone.
    expect((await get(b, sign(freshTs()))).status).toBe(503);
    await new Promise((r) => setTimeout(r, Date.parse(body.redis.replayMemory.refusingSignedBefore) - Date.now() + 50));
    expect((await get(a, sign(freshTs()))).status).toBe(200);
    expect((await get(b, sign(freshTs()))).status).toBe(200);
    expect((await get(a, headers)).status).not.toBe(200);
    const after = (await (await fetch(`${b.url}/readyz`)).json()) as any;
    expect(after.redis.replayMemory).toBeUndefined();
    expect((await (await fetch(`${a.url}/metrics`)).text()).match(/^bff_replay_memory_refusing 0$/m)).not.toBeNull();
  }, 60_000);

  it('a flush is a loss too; a replica started during the window refuses the same signatures', async () => {
    const ts = freshTs();
    const headers = sign(ts);
    expect((await get(a, headers)).status).toBe(200);
    const admin = new Redis(`redis://127.0.0.1:${port}`);
    try {
      await admin.flushall();
    } finally {
      admin.disconnect();
    }
    const c = await startGateway(env, { listen: true, overrides: { live: null } });
    try {
      c.deps.sessions.add(sessionId, party.id, key.publicKeyHex, Date.now() + 3_600_000);
      // The replica that knew the marker notices at its next write, and records the window ...
      const replay = await get(b, headers);
      expect(Date.now() - ts).toBeLessThan(WINDOW_MS);
      expect(replay).toMatchObject({ status: 503, json: { code: 'shared_state_unavailable' } });
      // ... which the replica started after the flush (that never saw the old marker) honours.
      const onC = await get(c, headers);
      expect(onC).toMatchObject({ status: 503, json: { code: 'shared_state_unavailable' } });
      expect(onC.json.error).toMatch(/was lost/);
    } finally {
      await c.close();
    }
  }, 30_000);
});
