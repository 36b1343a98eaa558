/**
 * A batch of 50 orders against its alternatives (`npm run bench:proxy`, after the proxy bench;
 * alone: `tsx bench/proxy-batch.ts`). The reference engine and the gateway run as separate
 * processes; one party with a session places, per round, the same kind of 50 pre-signed limit
 * orders (sell/buy pairs at one price, so the book stays small) three ways:
 *   - floor: the 50 sent straight to the engine concurrently (a pool of 50 connections);
 *   - batch: one `POST /v1/orders/batch` of the 50 through the gateway (items concurrent);
 *   - serial: 50 single `POST /v1/orders` through the gateway, one after another on one connection.
 * Rounds interleave the three (floor, batch, serial, then the reverse), so a drift of the shared
 * machine's load hits all alike; the medians are compared. Target: batch within 1.2× of the floor.
 * Writes the block between the batch-bench markers of docs/performance.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';
import { writeDocsBlock } from './docs-block.js';
import { freePort, procCpuMs, stop, waitHealthy } from './processes.js';
import { GatewayClient, localParty, requestMessage, type Session } from '../packages/client/src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? 30);
const N = 50;
const TOKEN = 'bench-batch-token';

/** BENCH_CPU_PROF=dir: the gateway runs with --cpu-prof, its profile written to dir when it stops. */
const PROF_DIR = process.env.BENCH_CPU_PROF;
/** BENCH_BATCH_ONLY=1: only the batch, round after round (for a profile of the batch path alone). */
const BATCH_ONLY = process.env.BENCH_BATCH_ONLY === '1';

/**
 * BENCH_BATCH_BASELINE=dir: a checkout of another version (e.g. `git archive main | tar -x -C dir`,
 * with node_modules linked) whose gateway runs beside this one on the same engine; its batch is
 * measured as a fourth way in the same rounds, for a before/after under the same load.
 */
const BASELINE = process.env.BENCH_BATCH_BASELINE;

function spawnTs(script: string, env: Record<string, string>, flags: string[] = [], root = ROOT): ChildProcess {
  return spawn(process.execPath, [...flags, '--import', 'tsx', join(root, script)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

interface Signed {
  body: string;
  sig: string;
}

async function presign(session: Session, n: number): Promise<Signed[]> {
  const out: Signed[] = [];
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({ market: 'ETH-PERP', side: i % 2 === 0 ? 'sell' : 'buy', type: 'limit', size: '0.01', price: '3000' });
    const ts = await session.nextTs();
    out.push({ body, sig: `${ts}.${await session.signature(requestMessage('POST', '/v1/orders', ts, body))}` });
  }
  return out;
}

const headers = (s: Session, sig: string) => ({ 'content-type': 'application/json', 'x-user': s.party, 'x-session-id': s.sessionId, 'x-session-sig': sig });

async function floor(engine: Pool, s: Session, orders: Signed[]): Promise<number> {
  const t0 = performance.now();
  const answers = await Promise.all(orders.map((o) => engine.request({ method: 'POST', path: '/v1/orders', body: o.body, headers: headers(s, o.sig) }).then((r) => r.body.json() as Promise<{ ok: boolean }>)));
  const ms = performance.now() - t0;
  if (!answers.every((a) => a.ok)) throw new Error('floor: an order was not accepted');
  return ms;
}

async function batch(gateway: Pool, s: Session, orders: Signed[]): Promise<number> {
  const body = JSON.stringify({ user: s.party, sessionId: s.sessionId, items: orders.map((o) => ({ op: 'place', body: o.body, sig: o.sig })) });
  const t0 = performance.now();
  const r = await gateway.request({ method: 'POST', path: '/v1/orders/batch', body, headers: { 'content-type': 'application/json' } });
  const answer = (await r.body.json()) as { results: { body: { ok: boolean } }[] };
  const ms = performance.now() - t0;
  if (!answer.results.every((x) => x.body.ok)) throw new Error('batch: an item was not accepted');
  return ms;
}

async function serial(gateway: Pool, s: Session, orders: Signed[]): Promise<number> {
  const t0 = performance.now();
  for (const o of orders) {
    const r = await gateway.request({ method: 'POST', path: '/v1/orders', body: o.body, headers: headers(s, o.sig) });
    const a = (await r.body.json()) as { ok: boolean };
    if (!a.ok) throw new Error('serial: an order was not accepted');
  }
  return performance.now() - t0;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  const enginePort = await freePort();
  const gatewayPort = await freePort();
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const engine = spawnTs('sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_ADMIN_TOKEN: TOKEN, ENGINE_TICK_MS: '1000', ENGINE_COMMIT_MS: '5000' });
  const gatewayEnv = (port: number): Record<string, string> => ({
    PORT: String(port),
    HOST: '127.0.0.1',
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: '',
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_IP_MAX: '10000000',
  });
  const gateway = spawnTs('src/main.ts', gatewayEnv(gatewayPort), PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []);
  const baselinePort = await freePort();
  const baselineUrl = `http://127.0.0.1:${baselinePort}`;
  const baseline = BASELINE ? spawnTs('src/main.ts', gatewayEnv(baselinePort), [], BASELINE) : null;
  const enginePool = new Pool(engineUrl, { connections: N });
  const gatewayPool = new Pool(gatewayUrl, { connections: 1 });
  const baselinePool = new Pool(baselineUrl, { connections: 1 });
  try {
    await waitHealthy(engineUrl);
    await waitHealthy(gatewayUrl);
    if (baseline) await waitHealthy(baselineUrl);
    const signer = await localParty('bench');
    const client = new GatewayClient({ baseUrl: gatewayUrl, retry: { retries: 0 } });
    const created = await client.createSession(signer);
    if (!created.ok) throw new Error(created.code);
    const s = client.session!;
    const funded = await request(`${engineUrl}/v1/admin/faucet`, { method: 'POST', body: JSON.stringify({ party: s.party, amount: '100000000' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` } });
    await funded.body.dump();
    // Warm-up: connections, JIT.
    for (let i = 0; i < 3; i++) {
      await floor(enginePool, s, await presign(s, N));
      await batch(gatewayPool, s, await presign(s, N));
      await serial(gatewayPool, s, await presign(s, N));
      if (baseline) await batch(baselinePool, s, await presign(s, N));
    }
    const times = { floor: [] as number[], batch: [] as number[], serial: [] as number[], baseline: [] as number[] };
    const gatewayCpu = { floor: 0, batch: 0, serial: 0, baseline: 0 };
    const loadBefore = loadavg()[0]!;
    for (let r = 0; r < ROUNDS; r++) {
      type Way = 'floor' | 'batch' | 'serial' | 'baseline';
      const ways: Way[] = BATCH_ONLY ? ['batch'] : baseline ? ['floor', 'batch', 'baseline', 'serial'] : ['floor', 'batch', 'serial'];
      const order = r % 2 === 0 ? ways : [...ways].reverse();
      for (const way of order) {
        const orders = await presign(s, N); // signed just before: well inside the ±30 s window
        const pid = way === 'baseline' ? baseline!.pid : gateway.pid;
        const cpu0 = procCpuMs(pid) ?? 0;
        const ms =
          way === 'floor' ? await floor(enginePool, s, orders) : way === 'batch' ? await batch(gatewayPool, s, orders) : way === 'baseline' ? await batch(baselinePool, s, orders) : await serial(gatewayPool, s, orders);
        gatewayCpu[way] += (procCpuMs(pid) ?? 0) - cpu0;
        times[way].push(ms);
      }
    }
    const result = {
      rounds: ROUNDS,
      orders: N,
      medianMs: { floor: round2(median(times.floor)), batch: round2(median(times.batch)), serial: round2(median(times.serial)) },
      batchOverFloor: round2(median(times.batch) / median(times.floor)),
      serialOverBatch: round2(median(times.serial) / median(times.batch)),
      gatewayCpuMsPer50: { batch: round2(gatewayCpu.batch / ROUNDS), serial: round2(gatewayCpu.serial / ROUNDS) },
      ...(baseline
        ? { baselineLabel: process.env.BENCH_BATCH_BASELINE_LABEL ?? 'another checkout', baseline: { dir: BASELINE, medianMs: round2(median(times.baseline)), overFloor: round2(median(times.baseline) / median(times.floor)), gatewayCpuMsPer50: round2(gatewayCpu.baseline / ROUNDS) } }
        : {}),
      loadAverage1m: { before: round2(loadBefore), after: round2(loadavg()[0]!) },
      machine: { nproc: cpus().length, model: cpus()[0]?.model ?? '?', node: process.version },
    };
    console.log(JSON.stringify(result, null, 2));
    if (!BATCH_ONLY && !PROF_DIR && process.env.BENCH_NO_DOCS !== "1") writeDocs(result);
  } finally {
    await enginePool.close();
    await gatewayPool.close();
    await baselinePool.close();
    await stop(gateway);
    if (baseline) await stop(baseline);
    await stop(engine);
  }
}

function writeDocs(r: any): void {
  const verdict = r.batchOverFloor <= 1.2 ? `**met** (${r.batchOverFloor}× the floor, target ≤ 1.2×)` : `**not met** (${r.batchOverFloor}× the floor, target ≤ 1.2×)`;
  writeDocsBlock('batch-bench', [
    '## A batch of 50 orders (`npm run bench:proxy`, bench/proxy-batch.ts)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.nproc} × ${r.machine.model}, Node ${r.machine.node}; 1-minute load average ${r.loadAverage1m.before} before, ${r.loadAverage1m.after} after (the machine was shared with other work). The engine and the gateway run as separate processes, the client in the bench process. ${r.rounds} rounds, each placing ${r.orders} pre-signed limit orders ${r.baseline ? 'four' : 'three'} ways, interleaved (${r.baseline ? 'floor, batch, batch before, serial' : 'floor, batch, serial'}, then the reverse); medians of the time from the first byte sent to the last answer read.`,
    '',
    '| Way | Median for 50 orders | Gateway CPU for the 50 (mean, /proc) |',
    '|---|---|---|',
    `| Floor: the 50 straight to the engine, concurrently (50 connections) | ${r.medianMs.floor} ms | – |`,
    `| One \`POST /v1/orders/batch\` of 50 through the gateway | ${r.medianMs.batch} ms | ${r.gatewayCpuMsPer50.batch} ms |`,
    `| 50 single \`POST /v1/orders\` through the gateway, one after another on one connection | ${r.medianMs.serial} ms | ${r.gatewayCpuMsPer50.serial} ms |`,
    ...(r.baseline
      ? [`| Before (\`BENCH_BATCH_BASELINE\`: ${r.baselineLabel}), the same batch, same rounds, same engine | ${r.baseline.medianMs} ms (${r.baseline.overFloor}× the floor) | ${r.baseline.gatewayCpuMsPer50} ms |`]
      : []),
    '',
    `Batch / floor: ${verdict}. Serial / batch: ${r.serialOverBatch}×.`,
  ]);
}

await main();
