// PostgreSQL stopped under live clients (a PostgreSQL of the test's own on a free port, stopped with
// `pg_ctl stop -m fast` and started again): two gateway replicas behind a real nginx, stream
// clients through nginx checked against the engine's log, an order and a book read every 50 ms.
// While it is down: orders and the book go on through nginx on both replicas, list reads answer
// the replicas' JSON 503 `database_unavailable` (never nginx's page), both replicas stay ready for
// the balancer (/readyz/replica) and each logs one warning. Once it is back: list reads answer on
// both replicas (none stuck), a second warning says so, and every client got every frame once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import postgres from 'postgres';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { closedPort, fleetServices, REDIS_URL, expectEveryTickOnce, startLiveReplicas, startOrderTakingEngine, tickClient, uniqueName, waitFor } from '../../support/fleet.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { ScriptedEngine } from '../../support/scripted-sse.js';
import { ownPostgresAvailable, startOwnPostgres, type OwnPostgres } from '../../support/own-postgres.js';
import { startNginx, type RunningNginx } from '../../../deploy/nginx.js';
import { migrate } from '../../../schema/migrate.js';
import { ticks } from '../../integration/stream/helpers.js';

const available = (await fleetServices({ redis: true, nginx: true })) && ownPostgresAvailable;

const party = makeParty('pgstop');
const key = generateKeyPair();
const sessionId = `sess-pgstop-${process.pid}`;
let lastTs = 0;
const ORDER = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', price: '100.0000000000', size: '1.0000000000' });
function signed(): Record<string, string> {
  lastTs = Math.max(lastTs + 1, Date.now());
  return { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${lastTs}.${signHex(key.privateKey, `POST\n/v1/orders\n${lastTs}\n${ORDER}`)}`, 'content-type': 'application/json' };
}

interface Answer {
  status: number;
  upstream: string;
  code?: string;
  html: boolean;
}
async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let code: string | undefined;
  let html = false;
  try {
    code = (JSON.parse(text) as { code?: string }).code;
  } catch {
    html = true;
  }
  return { status: res.status, upstream: res.headers.get('x-upstream') ?? '', html, ...(code ? { code } : {}) };
}

describe.skipIf(!available)('PostgreSQL stopped under live clients', () => {
  let pg: OwnPostgres;
  let engine: ScriptedEngine;
  let nginx: RunningNginx;
  const gws: TestGateway[] = [];
  const prefix = `${uniqueName('pgstop')}:`;
  const logLines: Array<{ msg: string; dependency?: string }> = [];
  let orderSigs: string[] = [];
  let next = 1;

  beforeAll(async () => {
    pg = await startOwnPostgres();
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    await migrate(sql, {});
    await sql.end();
    ({ engine, orderSigs } = await startOrderTakingEngine());
    engine.push(...ticks(next, next + 4));
    next += 5;
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
    const start = (i: number) =>
      startGateway(
        {
          ENGINE_BASE_URL: engine.url,
          ENGINE_ADMIN_TOKEN: engine.token,
          DATABASE_URL: pg.url,
          DB_CONNECT_TIMEOUT_S: '1',
          WS_ORDERBOOK_POLL_MS: '60000',
          TRUST_PROXY: '127.0.0.1',
          HTTP_MAX_CONNECTIONS_PER_IP: '0',
          RATE_LIMIT_IP_MAX: '1000000',
          RATE_LIMIT_MAX: '1000000',
          REDIS_URL,
          REDIS_PREFIX: prefix,
        },
        { listen: true, overrides: i === 0 ? { logger } : {} },
      );
    gws.push(...(await startLiveReplicas(2, start, { id: sessionId, party: party.id, publicKeyHex: key.publicKeyHex })));
    nginx = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: gws.map((g) => new URL(g.url).host), replicaKeepAliveMs: gws[0]!.deps.config.httpKeepAliveTimeoutMs });
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    for (const g of gws) await g.close();
    await engine?.close();
    await pg?.destroy();
  });

  it('orders, the book and the stream go on; list reads answer JSON 503; every replica recovers; 0 frames lost or repeated', async () => {
    const clients: Array<Awaited<ReturnType<typeof tickClient>>> = [];
    for (let i = 0; i < 4; i++) clients.push(await tickClient(nginx.url));
    const from = next;
    const ticker = setInterval(() => {
      engine.push(...ticks(next, next));
      next++;
    }, 20);
    const log: Array<{ phase: 'up' | 'down' | 'back'; what: string; a: Answer }> = [];
    let phase: 'up' | 'down' | 'back' = 'up';
    let running = true;
    const load = (async () => {
      while (running) {
        const p = phase;
        const [order, book, list] = await Promise.all([
          call(`${nginx.url}/v1/orders`, { method: 'POST', headers: signed(), body: ORDER }),
          call(`${nginx.url}/v1/orderbook?market=BTC-PERP`),
          call(`${nginx.url}/v1/events?limit=5`),
        ]);
        log.push({ phase: p, what: 'order', a: order }, { phase: p, what: 'book', a: book }, { phase: p, what: 'list', a: list });
        // Pacing: a round of calls every 50 ms.
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      await waitFor(() => log.filter((l) => l.phase === 'up').length >= 30, 10_000, 'load before');
      await pg.stop();
      phase = 'down';
      await waitFor(() => log.filter((l) => l.phase === 'down' && l.what === 'list').length >= 20, 30_000, 'load while down');
      for (const g of gws) expect((await fetch(`${g.url}/readyz/replica`)).status).toBe(200);
      await pg.start();
      phase = 'back';
      // No replica stuck: each answers list reads again by itself.
      for (const g of gws) await waitFor(async () => (await call(`${g.url}/v1/events?limit=5`)).status === 200, 20_000, `list reads on ${g.url}`);
      await waitFor(() => log.filter((l) => l.phase === 'back').length >= 30, 10_000, 'load after');
    } finally {
      running = false;
      await load;
      clearInterval(ticker);
    }

    expect(log.filter((l) => l.a.html)).toEqual([]);
    const down = log.filter((l) => l.phase === 'down');
    for (const what of ['order', 'book']) {
      const answers = down.filter((l) => l.what === what);
      expect(answers.filter((l) => l.a.status !== 200), what).toEqual([]);
      expect(new Set(answers.map((l) => l.a.upstream)).size, `${what} served by both replicas`).toBe(2);
    }
    const lists = down.filter((l) => l.what === 'list').map((l) => l.a);
    expect(lists.filter((a) => a.status !== 503 || a.code !== 'database_unavailable')).toEqual(
      // Reads that started before the stop may still have been answered.
      lists.filter((a) => a.status === 200),
    );
    expect(lists.filter((a) => a.status === 503).length).toBeGreaterThan(10);
    expect(orderSigs.length).toBe(log.filter((l) => l.what === 'order' && l.a.status === 200).length);

    await expectEveryTickOnce(clients, from, next - 1);
    const dbLines = logLines.filter((l) => l.dependency === 'database').map((l) => l.msg);
    expect(dbLines).toEqual(['database: unreachable', 'database: reachable again']);
  }, 120_000);
});
