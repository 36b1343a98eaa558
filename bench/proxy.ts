/**
 * Overhead of the gateway's trading proxy (`npm run bench:proxy`).
 *
 * Starts the reference engine and the gateway as two processes, then from this process measures
 * the same calls straight to the engine and through the gateway:
 *   - order placement: pre-signed requests, each with a unique timestamp (the engine refuses
 *     replays), matching sell/buy pairs so the book stays small;
 *   - order book reads (`GET /v1/orderbook?depth=20`).
 * Throughput and latency under load come from autocannon; the per-request overhead at no load is
 * measured precisely by a serial probe (one keep-alive connection, performance.now per request),
 * because autocannon reports whole milliseconds.
 * Prints JSON and writes the block between the proxy-bench markers of docs/performance.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';

/** autocannon ships no types; the slice used here. */
interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number };
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ORDERS = Number(process.env.BENCH_PROXY_ORDERS ?? 20_000);
const READS = Number(process.env.BENCH_PROXY_READS ?? 30_000);
const PROBE = Number(process.env.BENCH_PROXY_PROBE ?? 2_000);
const CONNECTIONS = Number(process.env.BENCH_PROXY_CONNECTIONS ?? 16);
const PARTIES = 16;
const TOKEN = 'bench-admin-token';
const BOOK = '/v1/orderbook?depth=20&market=ETH-PERP';

function keyPair(): { hex: string; priv: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { hex: der.subarray(der.length - 32).toString('hex'), priv: privateKey };
}
const signHex = (k: KeyObject, m: string): string => sign(null, Buffer.from(m), k).toString('hex');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function spawnTs(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, script)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function waitHealthy(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const r = await request(`${url}/healthz`);
      await r.body.dump();
      if (r.statusCode === 200) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function json(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await request(url, { method: method as 'GET', body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  return r.body.json();
}

interface Party {
  id: string;
  session: { hex: string; priv: KeyObject };
  sessionId: string;
  lastTs: number;
}

/** Unique signed order requests; sides alternate so consecutive orders match. */
function presign(parties: Party[], count: number): { body: string; headers: Record<string, string> }[] {
  return Array.from({ length: count }, (_, i) => {
    const p = parties[i % parties.length]!;
    const body = JSON.stringify({ market: 'ETH-PERP', side: i % 2 === 0 ? 'sell' : 'buy', type: 'limit', size: '0.01', price: '3000' });
    p.lastTs = Math.max(Date.now(), p.lastTs + 1);
    const sig = signHex(p.session.priv, `POST\n/v1/orders\n${p.lastTs}\n${body}`);
    return { body, headers: { 'content-type': 'application/json', 'x-user': p.id, 'x-session-id': p.sessionId, 'x-session-sig': `${p.lastTs}.${sig}` } };
  });
}

/** CPU time (ms) a child process has used so far, from /proc (Linux; null elsewhere). */
function cpuMs(pid: number | undefined): number | null {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return null;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in 100 Hz ticks
}

/** Runs a load and reports, next to its figures, the CPU µs per request each process spent. */
async function measured(run: () => Promise<Load>, gateway: ChildProcess, engine: ChildProcess): Promise<Load & { cpuUsPerReq: { gateway: number | null; engine: number | null } }> {
  const g0 = cpuMs(gateway.pid);
  const e0 = cpuMs(engine.pid);
  const load = await run();
  const per = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.round(((b - a) * 1000) / load.requests));
  return { ...load, cpuUsPerReq: { gateway: per(g0, cpuMs(gateway.pid)), engine: per(e0, cpuMs(engine.pid)) } };
}

interface Load {
  requestsPerSec: number;
  requests: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
}

async function loadOrders(base: string, reqs: { body: string; headers: Record<string, string> }[]): Promise<Load> {
  let next = 0;
  const r = await autocannon({
    url: `${base}/v1/orders`,
    connections: CONNECTIONS,
    amount: reqs.length,
    method: 'POST',
    requests: [{ setupRequest: (req: object) => ({ ...req, method: 'POST', path: '/v1/orders', ...reqs[next++ % reqs.length]! }) }],
  });
  return summarize(r);
}

async function loadBook(base: string, amount: number): Promise<Load> {
  return summarize(await autocannon({ url: `${base}${BOOK}`, connections: CONNECTIONS, amount }));
}

function summarize(r: AutocannonResult): Load {
  return { requestsPerSec: Math.round(r.requests.total / r.duration), requests: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts, p50: r.latency.p50, p99: r.latency.p99 };
}

/** Serial requests on one keep-alive connection: precise latency without queueing. */
async function probe(base: string, make: (i: number) => { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> }, n: number) {
  const pool = new Pool(base, { connections: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const r = make(i);
      const t0 = performance.now();
      const res = await pool.request({ method: r.method, path: r.path, body: r.body ?? null, headers: r.headers ?? {} });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`probe ${r.path} answered ${res.statusCode}`);
      times.push(performance.now() - t0);
    }
  } finally {
    await pool.close();
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Number(times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3));
  return { p50: at(0.5), p99: at(0.99) };
}

async function main(): Promise<void> {
  const enginePort = await freePort();
  const gatewayPort = await freePort();
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const engine = spawnTs('sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_ADMIN_TOKEN: TOKEN, ENGINE_RETENTION: '2000000', ENGINE_TICK_MS: '1000', ENGINE_COMMIT_MS: '5000' });
  // No DATABASE_URL and no admin token: the gateway runs only its proxy (no SSE bridge, no poller).
  const gateway = spawnTs('src/main.ts', {
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: '',
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000',
    ENGINE_CONNECTIONS: String(CONNECTIONS * 2),
  });
  try {
    await waitHealthy(engineUrl);
    await waitHealthy(gatewayUrl);
    const parties: Party[] = await Promise.all(
      Array.from({ length: PARTIES }, async (_, i) => {
        const k = keyPair();
        const s = keyPair();
        const id = `proxy${i}::${k.hex}`;
        const expiresAt = Date.now() + 3600_000;
        const auth = await json(`${engineUrl}/v1/session-auth`, 'POST', { party: id, sessionPublicKey: s.hex, expiresAt, signature: signHex(k.priv, `session-auth\n${id}\n${s.hex}\n${expiresAt}`) });
        await json(`${engineUrl}/v1/admin/faucet`, 'POST', { party: id, amount: '1000000000' }, { authorization: `Bearer ${TOKEN}` });
        return { id, session: s, sessionId: auth.sessionId as string, lastTs: 0 };
      }),
    );

    // Warm-up of both paths (JIT, connection pools), not measured.
    await loadBook(engineUrl, 3000);
    await loadBook(gatewayUrl, 3000);
    await loadOrders(gatewayUrl, presign(parties, 2000));

    const load1m = loadavg()[0]!;
    const bookDirect = await measured(() => loadBook(engineUrl, READS), gateway, engine);
    const bookGateway = await measured(() => loadBook(gatewayUrl, READS), gateway, engine);
    const directOrders = presign(parties, ORDERS);
    const ordersDirect = await measured(() => loadOrders(engineUrl, directOrders), gateway, engine);
    const gatewayOrders = presign(parties, ORDERS);
    const ordersGateway = await measured(() => loadOrders(gatewayUrl, gatewayOrders), gateway, engine);

    const bookProbe = { direct: await probe(engineUrl, () => ({ method: 'GET', path: BOOK }), PROBE), gateway: await probe(gatewayUrl, () => ({ method: 'GET', path: BOOK }), PROBE) };
    const orderProbe = async (base: string) => {
      const reqs = presign(parties, PROBE);
      return probe(base, (i) => ({ method: 'POST', path: '/v1/orders', ...reqs[i]! }), PROBE);
    };
    const ordersProbe = { direct: await orderProbe(engineUrl), gateway: await orderProbe(gatewayUrl) };

    const out = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadAverage1m: Number(load1m.toFixed(2)) },
      connections: CONNECTIONS,
      orderbook: { direct: bookDirect, gateway: bookGateway, throughputRatio: ratio(bookGateway, bookDirect), probe: bookProbe, addedP50Ms: added(bookProbe) },
      orders: { direct: ordersDirect, gateway: ordersGateway, throughputRatio: ratio(ordersGateway, ordersDirect), probe: ordersProbe, addedP50Ms: added(ordersProbe) },
    };
    console.log(JSON.stringify(out, null, 2));
    writeDocs(out);
  } finally {
    await Promise.all([stop(gateway), stop(engine)]);
  }
}

const ratio = (g: Load, d: Load) => Number((g.requestsPerSec / d.requestsPerSec).toFixed(2));
const added = (p: { direct: { p50: number }; gateway: { p50: number } }) => Number((p.gateway.p50 - p.direct.p50).toFixed(3));

/** The conclusion, computed from the figures of this run (they swing with other load on the host). */
function verdict(r: any): string {
  const met = (ok: boolean) => (ok ? 'met' : 'not met');
  const latencyOk = r.orders.addedP50Ms < 1 && r.orderbook.addedP50Ms < 1;
  const tput = (x: any) => `${Math.round(x.throughputRatio * 100)} %, ${met(x.throughputRatio >= 0.8)}`;
  return [
    `Targets in this run: added latency at p50 < 1 ms ${met(latencyOk)} (orders ${r.orders.addedP50Ms} ms, book ${r.orderbook.addedP50Ms} ms);`,
    `throughput ≥ 80 % of direct: orders ${tput(r.orders)}, book reads ${tput(r.orderbook)}.`,
    `A proxied call costs the gateway ${r.orders.gateway.cpuUsPerReq.gateway ?? '?'} µs (orders) and ${r.orderbook.gateway.cpuUsPerReq.gateway ?? '?'} µs (book reads) of CPU,`,
    `against the engine's ${r.orders.direct.cpuUsPerReq.engine ?? '?'} µs and ${r.orderbook.direct.cpuUsPerReq.engine ?? '?'} µs; most of the gateway's share is Fastify and the undici client themselves.`,
    'With the engine, the gateway and the load generator on two shared cores, every microsecond the gateway spends is taken from the engine, so cheap calls (book reads) lose the most throughput;',
    "a gateway with its own core(s), or more replicas, should leave the engine's throughput intact (not measured here). Rerun with `BENCH_PROXY_ORDERS`, `BENCH_PROXY_READS`, `BENCH_PROXY_CONNECTIONS`.",
  ].join(' ');
}

function writeDocs(r: any): void {
  const file = join(ROOT, 'docs/performance.md');
  const row = (name: string, x: any) =>
    `| ${name} | ${x.direct.requestsPerSec} req/s (p50 ${x.direct.p50} ms, p99 ${x.direct.p99} ms) | ${x.gateway.requestsPerSec} req/s (p50 ${x.gateway.p50} ms, p99 ${x.gateway.p99} ms, ${x.gateway.non2xx} non-2xx) | **${Math.round(x.throughputRatio * 100)} %** (≥ 80 %) | ${x.probe.direct.p50} / ${x.probe.direct.p99} ms | ${x.probe.gateway.p50} / ${x.probe.gateway.p99} ms | **${x.addedP50Ms} ms** (< 1 ms) |`;
  const cpu = (name: string, x: any) =>
    `| ${name} | ${x.direct.cpuUsPerReq.engine ?? '–'} µs | ${x.gateway.cpuUsPerReq.engine ?? '–'} µs | ${x.gateway.cpuUsPerReq.gateway ?? '–'} µs |`;
  const block = [
    '<!-- proxy-bench:start -->',
    '## Trading proxy overhead (`npm run bench:proxy`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}, 1-minute load average ${r.machine.loadAverage1m} at the start (the machine was shared). The reference engine and the gateway run as two processes; autocannon (${r.connections} keep-alive connections) runs in this one, so under load the three share the cores. "Serial" is one keep-alive connection, one request at a time: the latency the gateway adds without queueing.`,
    '',
    '| Call | Straight to the engine (load) | Through the gateway (load) | Throughput kept | Serial p50 / p99 direct | Serial p50 / p99 gateway | Added at p50 (serial) |',
    '|---|---|---|---|---|---|---|',
    row('`POST /v1/orders` (pre-signed, unique)', r.orders),
    row('`GET /v1/orderbook?depth=20`', r.orderbook),
    '',
    'CPU time per request under load (from /proc):',
    '',
    '| Call | Engine, direct | Engine, via gateway | Gateway |',
    '|---|---|---|---|',
    cpu('`POST /v1/orders`', r.orders),
    cpu('`GET /v1/orderbook?depth=20`', r.orderbook),
    '',
    verdict(r),
    '<!-- proxy-bench:end -->',
  ].join('\n');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = text.indexOf('<!-- proxy-bench:start -->');
  const end = text.indexOf('<!-- proxy-bench:end -->');
  if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + '<!-- proxy-bench:end -->'.length);
  else text = text.length === 0 ? `${block}\n` : `${text.replace(/\n*$/, '\n\n')}${block}\n`;
  writeFileSync(file, text);
}

await main();
