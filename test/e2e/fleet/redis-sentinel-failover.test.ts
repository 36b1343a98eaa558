// Redis Sentinel (REDIS_SENTINELS): a primary, two replicas and three sentinels of the test's own
// (test/support/redis-sentinel.ts), two gateway replicas trading against a scripted engine while
// live stream clients follow its event log.
// - The primary killed under trading load: trading is back within 10 s, no signature is accepted
//   twice (every accepted one is replayed on both replicas after the failover, and the engine sees
//   each signature once), and the stream clients get every frame once (0 lost, 0 repeated).
// - The replicas unable to acknowledge (stopped) while the primary takes signatures: none is
//   accepted (REDIS_WAIT_REPLICAS fails them closed), so the replica promoted when the primary then
//   dies cannot accept one a second time.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { fleetServices, uniqueName, waitFor } from '../../support/fleet.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { sentinelAvailable, startSentinelSet, type SentinelSet } from '../../support/redis-sentinel.js';
import { ticks } from '../../integration/stream/helpers.js';

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

interface StreamClient {
  ws: WebSocket;
  seqs: number[];
}
async function streamClient(gw: TestGateway): Promise<StreamClient> {
  const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/v1/stream?kinds=engine.tick_start`);
  const seqs: number[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.kind === 'engine.tick_start') seqs.push(m.seq);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, seqs };
}

describe.skipIf(!available)('Redis Sentinel failover under trading load', () => {
  let set: SentinelSet;
  let engine: ScriptedEngine;
  const gws: TestGateway[] = [];
  /** x-session-sig of every order the engine received. */
  const engineSigs: string[] = [];
  let next = 1;

  async function startFleet(s: SentinelSet): Promise<void> {
    const prefix = `${uniqueName('sentinel')}:`;
    for (let i = 0; i < 2; i++) {
      const gw = await startGateway(
        {
          ENGINE_BASE_URL: engine.url,
          ENGINE_ADMIN_TOKEN: engine.token,
          WS_ORDERBOOK_POLL_MS: '60000',
          RATE_LIMIT_MAX: '1000000',
          RATE_LIMIT_IP_MAX: '1000000',
          REDIS_SENTINELS: s.sentinels,
          REDIS_SENTINEL_NAME: s.name,
          REDIS_PREFIX: prefix,
        },
        { listen: true },
      );
      gw.deps.sessions.add(sessionId, party.id, key.publicKeyHex, Date.now() + 3_600_000);
      await gw.deps.live!.start();
      gws.push(gw);
    }
    await waitFor(() => gws.every((g) => g.deps.live!.status().connected), 10_000, 'replicas streaming');
  }

  async function stopFleet(): Promise<void> {
    for (const g of gws.splice(0)) await g.close();
  }

  beforeAll(async () => {
    engine = await startScriptedEngine();
    engine.handler = (req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'POST' || req.url !== '/v1/orders') return false;
      engineSigs.push(String(req.headers['x-session-sig']));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, orderId: `o-${engineSigs.length}`, status: 'resting' }));
      return true;
    };
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
    const clients = [await streamClient(gws[0]!), await streamClient(gws[0]!), await streamClient(gws[1]!), await streamClient(gws[1]!)];
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
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    try {
      await waitFor(() => answers.filter((a) => a.status === 200).length >= 40, 20_000, 'orders before the kill');
      const killedAt = await set.killPrimary();
      await waitFor(() => answers.some((a) => a.at > killedAt && a.status === 200), 15_000, 'an order accepted after the kill');
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
    const last = next - 1;
    await waitFor(() => clients.every((c) => c.seqs.at(-1) === last), 10_000, 'clients caught up');
    const want = Array.from({ length: last - from + 1 }, (_, i) => from + i);
    for (const c of clients) {
      expect(c.seqs.filter((s) => s >= from)).toEqual(want);
      c.ws.close();
    }
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
    await waitFor(async () => (await read(gws[0]!, signedRead())).status === 200, 15_000, 'signed calls accepted again');
    const replays = await Promise.all(accepted.flatMap((o) => gws.map((g) => read(g, o))));
    expect(replays.filter((r) => r.status !== 401)).toEqual([]);
  }, 90_000);
});
