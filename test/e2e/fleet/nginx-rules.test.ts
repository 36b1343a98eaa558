// nginx's three rules (deploy/nginx/gateway.conf.template, docs/fleet.md "nginx"), with a real nginx:
// 1. a dependency's outage stays the answer of the requests that need it: with PostgreSQL down,
//    order placement and the order book go on through nginx while list reads answer the replicas'
//    JSON 503; with Redis down too, every signed call answers JSON 503 `shared_state_unavailable`
//    (the engine never sees them), never a 502, also on connections left idle about as long as the
//    replicas keep them, while the order book and the stream go on. No replica is marked
//    failed by its own 503, and no answer is nginx's HTML page;
// 2. a signed request, or any request but GET/HEAD, is sent to one replica only: a replica that
//    takes the request and dies gets it answered by nginx's JSON 502, never retried on another
//    (its signature is spent there); an unsigned read is retried;
// 3. nginx's own errors are JSON with a `code`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { burstsAfterIdleGaps, closedPort, fleetServices, idleGapsAround, REDIS_URL, startLiveReplicas, startOrderTakingEngine, tcpReachable, tickClient, uniqueName, waitFor } from '../../support/fleet.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { eventually } from '../../support/eventually.js';
import { proxyIdleTimeoutMs, startNginx, type RunningNginx } from '../../../deploy/nginx.js';
import { ticks } from '../../integration/stream/helpers.js';

const REDIS_SERVER = '/usr/bin/redis-server';
const available = (await fleetServices({ redis: true, nginx: true })) && existsSync(REDIS_SERVER);

const party = makeParty('nginxrules');
const key = generateKeyPair();
const sessionId = `sess-nginx-rules-${process.pid}`;
let lastTs = 0;
function signed(method: string, path: string, body = ''): Record<string, string> {
  lastTs = Math.max(lastTs + 1, Date.now());
  return { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${lastTs}.${signHex(key.privateKey, `${method}\n${path}\n${lastTs}\n${body}`)}` };
}
function streamProof(): string {
  lastTs = Math.max(lastTs + 1, Date.now());
  return `user=${party.id}&sessionId=${sessionId}&sig=${lastTs}.${signHex(key.privateKey, `GET\n/v1/stream\n${lastTs}\n`)}`;
}

interface Answer {
  status: number;
  type: string;
  upstream: string;
  json: any;
}

async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const res = await fetch(base + path, { method, headers: body ? { ...headers, 'content-type': 'application/json' } : headers, body });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  // Any non-JSON answer (nginx's HTML page) fails here with the page in the message.
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${path}: ${res.status} not JSON (${type}): ${text.slice(0, 200)}`);
  }
  return { status: res.status, type, upstream: res.headers.get('x-upstream') ?? '', json };
}

const KEEP_ALIVE_MS = 2_000;
const ORDER = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', price: '100.0000000000', size: '1.0000000000' });

describe.skipIf(!available)('nginx: a dependency down stays its requests\' answer', () => {
  let engine: ScriptedEngine;
  let nginx: RunningNginx;
  let redis: ChildProcess | null = null;
  let redisPort: number;
  const gws: TestGateway[] = [];
  const prefix = `${uniqueName('ngxdeps')}:`;
  let orderSigs: string[] = [];
  let next = 1;

  beforeAll(async () => {
    redisPort = await closedPort();
    redis = spawn(REDIS_SERVER, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(() => tcpReachable(`redis://127.0.0.1:${redisPort}`), 10_000, 'redis-server');
    // A Redis up for less than the signing window refuses signatures from before its start plus the
    // window (its memory may have been lost then, docs/adr/0155): a short window, waited out.
    const redisUp = Date.now();
    ({ engine, orderSigs } = await startOrderTakingEngine());
    engine.push(...ticks(next, next + 4));
    next += 5;
    // PostgreSQL is down from the start: nothing listens at its address.
    const env = {
      ENGINE_BASE_URL: engine.url,
      ENGINE_ADMIN_TOKEN: engine.token,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/gone`,
      DB_CONNECT_TIMEOUT_S: '1',
      WS_ORDERBOOK_POLL_MS: '60000',
      TRUST_PROXY: '127.0.0.1',
      HTTP_MAX_CONNECTIONS_PER_IP: '0',
      RATE_LIMIT_IP_MAX: '100000',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_PREFIX: prefix,
      SIGNATURE_WINDOW_MS: '3000',
      // Short, so the outage below can reuse idle connections around their closing moments in seconds.
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
    };
    gws.push(...(await startLiveReplicas(2, () => startGateway(env, { listen: true }), { id: sessionId, party: party.id, publicKeyHex: key.publicKeyHex })));
    await new Promise((r) => setTimeout(r, Math.max(0, redisUp + 4_100 - Date.now())));
    nginx = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: gws.map((g) => new URL(g.url).host), replicaKeepAliveMs: gws[0]!.deps.config.httpKeepAliveTimeoutMs });
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    for (const g of gws) await g.close();
    await engine?.close();
    if (redis) {
      redis.kill('SIGKILL');
      redis = null;
    }
  });

  it('PostgreSQL down: orders and the order book go on through nginx on every replica, list reads answer the replicas\' JSON 503', async () => {
    const upstreams = new Set<string>();
    // List reads first: under the old template their 503s marked each replica failed in turn.
    for (let i = 0; i < 6; i++) {
      const r = await call(nginx.url, 'GET', '/v1/events?limit=5');
      expect(r).toMatchObject({ status: 503, json: { code: 'database_unavailable' } });
      expect(r.upstream.split(',')).toHaveLength(1); // never retried on the other replica
    }
    for (let i = 0; i < 8; i++) {
      const placed = await call(nginx.url, 'POST', '/v1/orders', signed('POST', '/v1/orders', ORDER), ORDER);
      expect(placed).toMatchObject({ status: 200, json: { ok: true } });
      const book = await call(nginx.url, 'GET', '/v1/orderbook?market=BTC-PERP');
      expect(book.status).toBe(200);
      upstreams.add(placed.upstream).add(book.upstream);
    }
    expect(upstreams.size).toBe(2); // both replicas kept serving
    expect(orderSigs.length).toBe(8);
    for (const g of gws) {
      expect((await fetch(`${g.url}/readyz`)).status).toBe(503);
      // The replica probe also judges the replica's own event loop over the last 5–10 s, which a
      // loaded CI machine can hold past 2 s once: asked again until that window has passed, it must be
      // 200 (the database is still down), and its last answer names why when it is not.
      let replica = { status: 0, body: '' };
      await eventually(
        async () => {
          const r = await fetch(`${g.url}/readyz/replica`);
          replica = { status: r.status, body: await r.text() };
          return replica.status === 200;
        },
        { timeoutMs: 15_000, everyMs: 500, what: () => `/readyz/replica 200 (last: ${replica.status} ${replica.body})` },
      );
    }
  }, 60_000);

  it('Redis down too: signed calls answer JSON 503 shared_state_unavailable and never reach the engine; the book and the stream go on', async () => {
    const client = await tickClient(nginx.url);
    const from = next;
    engine.push(...ticks(next, next + 4));
    next += 5;
    await waitFor(() => client.seqs.length >= 5, 10_000, 'frames before');

    redis!.kill('SIGKILL');
    redis = null;
    const before = orderSigs.length;
    const upstreams = new Set<string>();
    // Every answer of a signed call during the outage, in bursts after idle gaps around the moments
    // nginx and the replicas close idle connections: a 503 with a code (or a success), never a 502.
    const signedCall = async (i: number): Promise<string> => {
      try {
        const r = i % 2 === 0 ? await call(nginx.url, 'POST', '/v1/orders', signed('POST', '/v1/orders', ORDER), ORDER) : await call(nginx.url, 'DELETE', '/v1/orders/o-1', signed('DELETE', '/v1/orders/o-1'));
        upstreams.add(r.upstream);
        return `${r.status} ${r.json.code ?? ''}`.trim();
      } catch (err) {
        return `failed: ${(err as Error).message} ${String((err as Error & { cause?: unknown }).cause ?? '')}`;
      }
    };
    const gaps = idleGapsAround(KEEP_ALIVE_MS, proxyIdleTimeoutMs(KEEP_ALIVE_MS));
    const answers = await burstsAfterIdleGaps(gaps, () => Promise.all(Array.from({ length: 12 }, (_, i) => signedCall(i))));
    const tally: Record<string, number> = {};
    for (const a of answers) tally[a] = (tally[a] ?? 0) + 1;
    console.log(`[redis down] ${answers.length} signed calls through nginx: ${JSON.stringify(tally)}`);
    expect(answers.filter((a) => !/^(2\d\d|503 [a-z_]+)$/.test(a))).toEqual([]);
    expect(tally).toEqual({ '503 shared_state_unavailable': (gaps.length + 1) * 12 });
    const book = await call(nginx.url, 'GET', '/v1/orderbook?market=BTC-PERP');
    expect(book.status).toBe(200);
    expect(orderSigs.length).toBe(before);
    expect(upstreams.size).toBe(2);

    engine.push(...ticks(next, next + 4));
    next += 5;
    await waitFor(() => client.seqs.length >= 10, 10_000, 'frames while Redis is down');
    expect(client.seqs).toEqual(Array.from({ length: 10 }, (_, i) => from + i));
    client.ws.close();
  }, 90_000);
});

describe.skipIf(!available)('nginx: sent once, and its own errors in JSON', () => {
  let nginx: RunningNginx;
  let dying: Server;
  let gw: TestGateway;
  let engine: ScriptedEngine;
  let taken = 0;
  const prefix = `${uniqueName('ngxonce')}:`;

  beforeAll(async () => {
    engine = await startScriptedEngine();
    engine.books.set('BTC-PERP', { seq: 1, bids: [], asks: [] });
    engine.handler = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.startsWith('/v1/orders')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        return true;
      }
      return false;
    };
    // A replica that takes each request and dies before answering (the connection is reset).
    dying = createServer((socket: Socket) => {
      socket.once('data', () => {
        taken++;
        socket.resetAndDestroy();
      });
    });
    await new Promise<void>((r) => dying.listen(0, '127.0.0.1', r));
    gw = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, WS_ORDERBOOK_POLL_MS: '60000', TRUST_PROXY: '127.0.0.1', REDIS_URL, REDIS_PREFIX: prefix },
      { listen: true, overrides: { live: null } },
    );
    gw.deps.sessions.add(sessionId, party.id, key.publicKeyHex, Date.now() + 3_600_000);
    // The dying replica first; the healthy one as a backup, asked only when a request may go on.
    const port = (dying.address() as { port: number }).port;
    nginx = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: [`127.0.0.1:${port}`, `${new URL(gw.url).host} backup`], replicaKeepAliveMs: gw.deps.config.httpKeepAliveTimeoutMs });
  }, 30_000);

  afterAll(async () => {
    await nginx?.stop();
    await gw?.close();
    await engine?.close();
    dying?.close();
  });

  // After a failure the dying replica is out for fail_timeout (2 s, counted by nginx in whole
  // seconds: up to 3 s): each case waits it out, so its request meets the dying replica first.
  const fresh = () => new Promise((r) => setTimeout(r, 3_100));

  it('an unsigned read is retried on the next replica', async () => {
    await fresh();
    const t = taken;
    const r = await call(nginx.url, 'GET', '/v1/orderbook?market=BTC-PERP');
    expect(taken).toBe(t + 1);
    expect(r.status).toBe(200);
    expect(r.upstream.split(', ')).toHaveLength(2);
  });

  it.each([
    ['a signed GET', 'GET', `/v1/users/${party.id}/orders`, true],
    ['a signed DELETE', 'DELETE', '/v1/orders/o-1', true],
    ['a signed POST', 'POST', '/v1/orders', true],
    ['an unsigned POST', 'POST', '/v1/session-auth', false],
  ] as const)('%s is sent once: nginx answers its JSON 502, the other replica never sees it', async (_name, method, path, isSigned) => {
    await fresh();
    const t = taken;
    const body = method === 'POST' ? ORDER : undefined;
    const r = await call(nginx.url, method, path, isSigned ? signed(method, path, body ?? '') : {}, body);
    expect(taken).toBe(t + 1);
    expect(r).toMatchObject({ status: 502, json: { code: 'replica_unavailable' } });
    expect(r.type).toContain('application/json');
    expect(r.upstream.split(', ')).toHaveLength(1);
  });

  it('a signed stream upgrade is sent once; an unsigned one is retried', async () => {
    await fresh();
    const refused = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${nginx.url.replace('http', 'ws')}/v1/stream?${streamProof()}`);
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => reject(new Error('opened')));
      ws.once('error', () => undefined);
    });
    expect(refused).toBe(502);
    await fresh();
    const opened = await new Promise<boolean>((resolve) => {
      const ws = new WebSocket(`${nginx.url.replace('http', 'ws')}/v1/stream`);
      ws.once('open', () => {
        ws.close();
        resolve(true);
      });
      ws.once('unexpected-response', () => resolve(false));
      ws.once('error', () => resolve(false));
    });
    expect(opened).toBe(true);
  });

  it("nginx's own errors are JSON: no replica left, body too large", async () => {
    // Both gone: the dying one just failed and the backup is stopped.
    const stopped = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: [`127.0.0.1:${await closedPort()}`], replicaKeepAliveMs: gw.deps.config.httpKeepAliveTimeoutMs });
    try {
      const r = await call(stopped.url, 'GET', '/v1/orderbook?market=BTC-PERP');
      expect(r).toMatchObject({ status: 502, json: { code: 'replica_unavailable' } });
      const big = 'x'.repeat(2 * 1024 * 1024);
      const tooLarge = await call(stopped.url, 'POST', '/v1/orders', {}, big);
      expect(tooLarge).toMatchObject({ status: 413, json: { code: 'payload_too_large' } });
    } finally {
      await stopped.stop();
    }
  });

  it("a header the replica takes passes nginx; what nginx refuses itself (headers, URL, method) is JSON too", async () => {
    // 9 KB of headers: under the replica's 16 KiB, over nginx's default 8 KB buffers (a 400 HTML page).
    const taken = await call(nginx.url, 'GET', '/v1/markets', { 'x-trace-context': 'a'.repeat(9_000) });
    expect(taken.status).toBe(200);
    // Past the replica's cap: the replica's JSON 431 (or nginx's own, in the same shape).
    const headers = await call(nginx.url, 'GET', '/v1/markets', { 'x-a': 'a'.repeat(15_000), 'x-b': 'b'.repeat(15_000), 'x-c': 'c'.repeat(15_000), 'x-d': 'd'.repeat(15_000), 'x-e': 'e'.repeat(15_000) });
    expect(headers).toMatchObject({ status: 431, json: { code: 'headers_too_large' } });
    const oneHeader = await call(nginx.url, 'GET', '/v1/markets', { 'x-a': 'a'.repeat(20_000) });
    expect(oneHeader).toMatchObject({ status: 431, json: { code: 'headers_too_large' } });
    const uri = await call(nginx.url, 'GET', `/v1/markets?x=${'a'.repeat(20_000)}`);
    expect(uri).toMatchObject({ status: 414, json: { code: 'uri_too_long' } });
    // TRACE is refused by nginx itself (fetch cannot send it: raw HTTP).
    const trace = await new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
      const req = httpRequest(nginx.url + '/v1/markets', { method: 'TRACE' }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
      });
      req.once('error', reject).end();
    });
    expect(trace.status).toBe(405);
    expect(trace.type).toContain('application/json');
    expect(JSON.parse(trace.text)).toMatchObject({ code: 'method_not_allowed' });
    // Its internal error pages are not pages of their own.
    expect(await call(nginx.url, 'GET', '/.lb-error/400')).toMatchObject({ status: 404, json: { code: 'not_found' } });
  });
});
