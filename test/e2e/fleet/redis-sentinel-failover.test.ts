// Redis Sentinel (REDIS_SENTINELS): a primary, two replicas and three sentinels of the test's own
// (test/support/redis-sentinel.ts), two gateway replicas trading against a scripted engine while
// live stream clients follow its event log.
// - The primary killed under trading load: trading is back within 10 s, no signature is accepted
//   twice (every accepted one is replayed on both replicas after the failover, and the engine sees
//   each signature once), and the stream clients get every frame once (0 lost, 0 repeated).
// - The replicas unable to acknowledge (stopped) while the primary takes signatures: none is
//   accepted (REDIS_WAIT_REPLICAS fails them closed), so the replica promoted when the primary then
//   dies cannot accept one a second time.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { fleetServices, expectEveryTickOnce, startLiveReplicas, startOrderTakingEngine, tickClient, uniqueName, waitFor } from '../../support/fleet.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { ScriptedEngine } from '../../support/scripted-sse.js';
import { sentinelAvailable, startSentinelSet, type SentinelSet } from '../../support/redis-sentinel.js';
import { ticks } from '../../integration/stream/helpers.js';
import { eventually } from '../../support/eventually.js';

const available = (await fleetServices({})) && sentinelAvailable;

const party = makeParty('sentinel');
const key = generateKeyPair();
const sessionId = `sess-sentinel-${process.pid}`;
let lastTs = 0;
let orderNo = 0;

interface Signed {
  headers: Record<string, string>;
  body: string;
}
function signedOrder(): Signed {
  lastTs = Math.max(lastTs + 1, Date.now());
  const body = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', price: `${100 + (orderNo++ % 50)}.0000000000`, size: '1.0000000000' });
  return { headers: { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${lastTs}.${signHex(key.privateKey, `POST\n/v1/orders\n${lastTs}\n${body}`)}`, 'content-type': 'application/json' }, body };
}
/** A signed party read: the gateway itself judges its signature (the authenticate guard), replay included. */
function signedRead(): Signed {
  lastTs = Math.max(lastTs + 1, Date.now());
  const path = `/v1/users/${party.id}/orders`;
  return { headers: { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${lastTs}.${signHex(key.privateKey, `GET\n${path}\n${lastTs}\n`)}` }, body: '' };
}
async function read(gw: TestGateway, o: Signed): Promise<{ status: number; code?: string }> {
  return answer(fetch(`${gw.url}/v1/users/${party.id}/orders`, { headers: o.headers, signal: AbortSignal.timeout(5_000) }));
}
async function place(gw: TestGateway, o: Signed): Promise<{ status: number; code?: string }> {
  return answer(fetch(`${gw.url}/v1/orders`, { method: 'POST', headers: o.headers, body: o.body, signal: AbortSignal.timeout(5_000) }));
}
async function answer(pending: Promise<Response>): Promise<{ status: number; code?: string }> {
  try {
    const res = await pending;
    const json = (await res.json()) as { code?: string };
    return { status: res.status, ...(json.code ? { code: json.code } : {}) };
  } catch {
    return { status: 0 };
  }
}

describe.skipIf(!available)('Redis Sentinel failover under trading load', () => {
  let set: SentinelSet;
  let engine: ScriptedEngine;
  const gws: TestGateway[] = [];
  /** x-session-sig of every order the engine received. */
  let engineSigs: string[] = [];
  let next = 1;

  async function startFleet(s: SentinelSet): Promise<void> {
    const prefix = `${uniqueName('sentinel')}:`;
    const start = () =>
      startGateway(
        {
          ENGINE_BASE_URL: engine.url,
          ENGINE_ADMIN_TOKEN: engine.token,
          WS_ORDERBOOK_POLL_MS: '60000',
          RATE_LIMIT_MAX: '1000000',
          RATE_LIMIT_IP_MAX: '1000000',
          REDIS_SENTINELS: s.sentinels,
          REDIS_SENTINEL_NAME: s.name,
          REDIS_PREFIX: prefix,
          // A fresh Redis refuses signatures for one window after its start (its memory may have
          // been lost then, docs/adr/0155): a short window, waited out below.
          SIGNATURE_WINDOW_MS: '5000',
        },
        { listen: true },
      );
    gws.push(...(await startLiveReplicas(2, start, { id: sessionId, party: party.id, publicKeyHex: key.publicKeyHex })));
    await new Promise((r) => setTimeout(r, Math.max(0, s.startedAt + 6_100 - Date.now())));
  }

  async function stopFleet(): Promise<void> {
    for (const g of gws.splice(0)) await g.close();
  }

  beforeAll(async () => {
    ({ engine, orderSigs: engineSigs } = await startOrderTakingEngine());
    engine.push(...ticks(next, next + 4));
    next += 5;
  }, 30_000);

  afterEach(async () => {
    await stopFleet();
    await set?.stop();
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('the primary killed: trading back within 10 s, no signature accepted twice, every frame once', async () => {
    set = await startSentinelSet('gwmaster');
    await startFleet(set);
    const clients = [await tickClient(gws[0]!.url), await tickClient(gws[0]!.url), await tickClient(gws[1]!.url), await tickClient(gws[1]!.url)];
    const from = next;

    // The engine's log moves all along: a tick every 20 ms.
    const ticker = setInterval(() => {
      engine.push(...ticks(next, next));
      next++;
    }, 20);
    // Trading load: an order and a signed party read every 25 ms, alternating replicas.
    const answers: Array<{ at: number; order: Signed; status: number; code?: string }> = [];
    const reads: Array<{ read: Signed; status: number; code?: string }> = [];
    let trading = true;
    const load = (async () => {
      let i = 0;
      while (trading) {
        const order = signedOrder();
        const r = signedRead();
        const [a, b] = await Promise.all([place(gws[i % 2]!, order), read(gws[(i + 1) % 2]!, r)]);
        i++;
        answers.push({ at: Date.now(), order, ...a });
        reads.push({ read: r, ...b });
        // Pacing: an order and a read every 25 ms.
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    try {
      await waitFor(() => answers.filter((a) => a.status === 200).length >= 40, 20_000, 'orders before the kill');
      const killedAt = await set.killPrimary();
      await waitFor(() => answers.some((a) => a.at > killedAt && a.status === 200), 15_000, 'an order accepted after the kill').catch(async (err: Error) => {
        // Said with the failure (a CI run at load 8 timed out here once, with nothing said of why):
        // what the orders got since the kill, and whom the sentinels name.
        const since = answers.filter((a) => a.at > killedAt);
        const outcomes: Record<string, number> = {};
        for (const a of since) outcomes[`${a.status} ${a.code ?? ''}`.trim()] = (outcomes[`${a.status} ${a.code ?? ''}`.trim()] ?? 0) + 1;
        const named = await set!.primaryNow().then(String, (e: Error) => `none (${e.message})`);
        throw new Error(`${err.message}: ${since.length} orders answered since the kill ${JSON.stringify(outcomes)}; the sentinels name port ${named} (killed ${set!.primaryPort}, replicas ${set!.replicaPorts.join(', ')})`);
      });
      const backAt = answers.find((a) => a.at > killedAt && a.status === 200)!.at;
      console.log(`[sentinel] primary killed; first order accepted again after ${backAt - killedAt} ms`);
      expect(backAt - killedAt).toBeLessThanOrEqual(10_000);
      expect(set.replicaPorts).toContain(await set.primaryNow());
      // Trading goes on after the failover.
      await waitFor(() => answers.filter((a) => a.at > backAt && a.status === 200).length >= 20, 15_000, 'orders after the failover');
    } finally {
      trading = false;
      await load;
      clearInterval(ticker);
    }
    // Refusals while the primary was gone are JSON 503 shared_state_unavailable, never anything else.
    const refused = [...answers, ...reads].filter((a) => a.status !== 200);
    expect(refused.every((a) => a.status === 503 && a.code === 'shared_state_unavailable'), JSON.stringify(refused.slice(0, 3))).toBe(true);
    // The engine got each accepted order once, and no refused one.
    const accepted = answers.filter((a) => a.status === 200);
    expect(new Set(engineSigs).size).toBe(engineSigs.length);
    expect(engineSigs.length).toBe(accepted.length);

    // Every signature the gateway accepted (the party reads it judges itself), replayed on both
    // replicas after the failover: refused as a replay every time.
    const acceptedReads = reads.filter((r) => r.status === 200);
    expect(acceptedReads.length).toBeGreaterThan(40);
    const replays = await Promise.all(acceptedReads.flatMap((r) => gws.map((g) => read(g, r.read))));
    expect(replays.filter((r) => r.status !== 401)).toEqual([]);

    // Every client got every tick of the engine's log, once, in order.
    await expectEveryTickOnce(clients, from, next - 1);
    // No replica stuck: both reach the new primary, take orders and are ready.
    for (const g of gws) {
      expect((await place(g, signedOrder())).status).toBe(200);
      const ready = (await (await fetch(`${g.url}/readyz`)).json()) as { redis: { reachable: boolean } };
      expect(ready.redis.reachable).toBe(true);
      expect((await fetch(`${g.url}/readyz/replica`)).status).toBe(200);
    }
  }, 90_000);

  it('a signature no replica has acknowledged is refused, so the promoted replica cannot accept it again', async () => {
    set = await startSentinelSet('gwmaster2');
    await startFleet(set);
    const accepted: Signed[] = [];
    for (let i = 0; i < 10; i++) {
      const o = signedRead();
      expect((await read(gws[i % 2]!, o)).status).toBe(200);
      accepted.push(o);
    }
    // The replicas stop acknowledging; the primary alone takes the signatures.
    const paused = await Promise.all(set.replicaPorts.map((p) => set.pidOf(p)));
    for (const pid of paused) process.kill(pid, 'SIGSTOP');
    try {
      const during = [];
      for (let i = 0; i < 6; i++) {
        const o = signedRead();
        const a = await read(gws[i % 2]!, o);
        if (a.status === 200) accepted.push(o);
        during.push(a);
      }
      expect(during).toEqual(Array(6).fill({ status: 503, code: 'shared_state_unavailable' }));
      // The primary dies with what only it holds; the replica comes back and is promoted.
      await set.killPrimary();
    } finally {
      for (const pid of paused) process.kill(pid, 'SIGCONT');
    }
    await waitFor(async () => set.replicaPorts.includes(await set.primaryNow().catch(() => 0)), 20_000, 'replica promoted');
    // Both replicas have found the new primary (each reconnects on its own schedule).
    for (const g of gws) await waitFor(async () => (await read(g, signedRead())).status === 200, 15_000, 'signed calls accepted again');
    // Each replay is refused: never accepted (200); a 503 (a gateway between two connections to
    // the new primary) is tried again until the replay memory answers, which must be 401.
    const settled = async (g: TestGateway, o: Signed) => {
      // Asked again while 503 (up to ~4 s); the last answer is for the expect below to judge.
      let last: Awaited<ReturnType<typeof read>> | undefined;
      await eventually(async () => (last = await read(g, o)).status !== 503, { timeoutMs: 4_000, everyMs: 100 }).catch(() => undefined);
      return last!;
    };
    const replays = [];
    for (const o of accepted) for (const g of gws) replays.push(await settled(g, o));
    expect(replays.filter((r) => r.status !== 401)).toEqual([]);
  }, 90_000);
});
