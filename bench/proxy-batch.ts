/**
 * A batch of 50 orders against its alternatives (`npm run bench:proxy`, after the proxy bench;
 * alone: `tsx bench/proxy-batch.ts`). The reference engine and the gateway run as separate
 * processes; one party with a session places, per round, the same kind of 50 pre-signed limit
 * orders (sell/buy pairs at one price, so the book stays small) several ways:
 *   - floor: the 50 sent straight to the engine concurrently (a pool of 50 connections);
 *   - batch: one `POST /v1/orders/batch` of the 50 through the gateway (items concurrent; replay
 *     memory and budgets in process memory, as a single replica);
 *   - batch, Redis: the same through a second gateway whose replay memory and budgets are in a
 *     Redis of the bench's own (a fleet replica; when /usr/bin/redis-server exists);
 *   - serial: 50 single `POST /v1/orders` through the gateway, one after another on one connection.
 * The gateway on Redis is measured in rounds of its own (floor and Redis batch), after the rounds
 * of the floor, the batch and the serial calls: in the same rounds its work spilled into the ways
 * measured after it.
 * Rounds interleave the ways (floor first, then the reverse order), each way run BENCH_BATCH_REPEAT
 * times per round, so a drift of the shared machine's load hits all alike. Each round gives its own
 * ratio batch / floor (of runs made side by side), and the target is judged on the median of those
 * per-round ratios (a load spike then spoils one round's pair, not the comparison of two medians
 * taken at different moments).
 *
 * BENCH_BATCH_PIN=1 (with `taskset`) adds a pinned phase: the engine (all its threads) on CPU 0; the
 * bench client, the gateways and Redis on CPU 1, so the fan-out work (50 requests written, 50
 * answers read) is on CPU 1 whoever does it (the bench client for the floor, the gateway for a
 * batch). Not by default: on this shared machine it did not steady the figures (docs/performance.md).
 * Target: batch within 1.2× of the floor.
 * Writes the block between the batch-bench markers of docs/performance.md.
 */
import { SHORT, shortFigure, sized } from './short.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool, request } from 'undici';
import { writeDocsBlock } from './docs-block.js';
import { freePort, hasTaskset, procCpuMs, stop, stopWithBench, waitHealthy } from './processes.js';
import { GatewayClient, localParty, requestMessage, type Session } from '../packages/client/src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? sized(60, 1));
/**
 * Runs of each way per round (BENCH_BATCH_REPEAT, default 3), interleaved (floor, batch, …, floor,
 * batch, …); the round's figure of a way is the median of its runs, so one run that met a load
 * spike does not decide a round's ratio.
 */
const REPEAT = Number(process.env.BENCH_BATCH_REPEAT ?? sized(3, 1));
const N = 50;
const TOKEN = 'bench-batch-token';
const REDIS_SERVER = '/usr/bin/redis-server';

/** BENCH_CPU_PROF=dir: the gateway runs with --cpu-prof, its profile written to dir when it stops. */
const PROF_DIR = process.env.BENCH_CPU_PROF;
/** BENCH_BATCH_ONLY=1: only the batch, round after round (for a profile of the batch path alone). */
const BATCH_ONLY = process.env.BENCH_BATCH_ONLY === '1';
const PIN = process.env.BENCH_BATCH_PIN === '1' && !BATCH_ONLY && hasTaskset();
const WITH_REDIS = process.env.BENCH_BATCH_REDIS !== '0' && !BATCH_ONLY && existsSync(REDIS_SERVER);
/**
 * BENCH_BATCH_SERIAL=0: no serial way. The serial way runs on the batch's gateway, which then
 * serves 150 more calls a round than a baseline gateway does (see BENCH_BATCH_BASELINE).
 */
const WITH_SERIAL = process.env.BENCH_BATCH_SERIAL !== '0';

/**
 * BENCH_BATCH_BASELINE=dir: a checkout of another version (e.g. `git archive main | tar -x -C dir`,
 * with node_modules linked) whose gateway runs beside this one on the same engine; its batch is
 * measured as another way in the same rounds, for a before/after under the same load.
 */
const BASELINE = process.env.BENCH_BATCH_BASELINE;
/** BENCH_BATCH_BASELINE_REDIS=1: that other gateway runs on the bench's Redis too (compare it with "batch, Redis"). */
const BASELINE_REDIS = process.env.BENCH_BATCH_BASELINE_REDIS === '1' && WITH_REDIS;

function spawnTs(script: string, env: Record<string, string>, flags: string[] = [], root = ROOT): ChildProcess {
  return stopWithBench(spawn(process.execPath, [...flags, '--import', 'tsx', join(root, script)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] }));
}

/** Sets the CPU affinity of every thread of a process (taskset -a). */
function pin(pid: number | undefined, cpu: string): void {
  if (pid === undefined) throw new Error('process has no pid');
  execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });
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
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

type Way = 'floor' | 'batch' | 'redis' | 'serial' | 'baseline';

/** A fresh Redis of the bench's own (no persistence), so the shared one is never loaded or flushed. */
async function startRedis(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = stopWithBench(spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
  return { url: `redis://127.0.0.1:${port}`, proc };
}

/**
 * Script calls (EVALSHA, EVAL: the replay memory's and the rate limits') a Redis has answered so far
 * (INFO commandstats). Not every command: the commands a script runs are counted there too.
 */
function redisScriptCalls(url: string): number {
  const port = new URL(url).port;
  const info = execFileSync('redis-cli', ['-p', port, 'info', 'commandstats'], { encoding: 'utf8' });
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

/**
 * Waits until a one-item batch through `pool` is accepted: a gateway on a fresh Redis first refuses
 * signatures from before it found the replay memory empty, for one signing window (docs/adr/0155).
 */
async function batchReady(pool: Pool, s: Session, label: string): Promise<void> {
  const until = Date.now() + 90_000;
  for (;;) {
    const [o] = await presign(s, 1);
    const body = JSON.stringify({ user: s.party, sessionId: s.sessionId, items: [{ op: 'place', body: o!.body, sig: o!.sig }] });
    const r = await pool.request({ method: 'POST', path: '/v1/orders/batch', body, headers: { 'content-type': 'application/json' } });
    await r.body.dump();
    if (r.statusCode === 200) return;
    if (Date.now() > until) throw new Error(`${label}: a batch is still answered ${r.statusCode}`);
    await new Promise((res) => setTimeout(res, sized(1_000, 200)));
  }
}

interface PhaseResult {
  name: 'unpinned' | 'pinned';
  placement: string;
  medianMs: Partial<Record<Way, number>>;
  /** Per round, batch / floor of that round; the median and quartiles. */
  ratio: { median: number; p25: number; p75: number; roundsWithin: number };
  redisRatio: { median: number; p25: number; p75: number; roundsWithin: number } | null;
  /** Redis script calls per batch of 50 (INFO commandstats over the phase): this gateway's, and the baseline's on its own Redis. */
  redisCommandsPerBatch: { redis: number | null; baseline: number | null };
  baselineRatio: number | null;
  gatewayCpuMsPer50: Partial<Record<Way, number>>;
  loadAverage1m: { before: number; after: number };
}

async function main(): Promise<void> {
  const enginePort = await freePort();
  const gatewayPort = await freePort();
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const engine = spawnTs('sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_ADMIN_TOKEN: TOKEN, ENGINE_TICK_MS: '1000', ENGINE_COMMIT_MS: '5000' });
  const gatewayEnv = (port: number, extra: Record<string, string> = {}): Record<string, string> => ({
    PORT: String(port),
    HOST: '127.0.0.1',
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: '',
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_IP_MAX: '10000000',
    ...extra,
  });
  const gateway = spawnTs('src/main.ts', gatewayEnv(gatewayPort), PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []);
  const redis = WITH_REDIS ? await startRedis() : null;
  const redisGwPort = await freePort();
  const redisGwUrl = `http://127.0.0.1:${redisGwPort}`;
  // A short run narrows this gateway's signing window to 10 s: on its fresh Redis it refuses
  // signatures for one window (batchReady), which was most of a short run's time with the 30 s default.
  const redisGateway = redis ? spawnTs('src/main.ts', gatewayEnv(redisGwPort, { REDIS_URL: redis.url, REDIS_PREFIX: 'bench:', ...(SHORT ? { SIGNATURE_WINDOW_MS: '10000' } : {}) })) : null;
  const baselinePort = await freePort();
  const baselineUrl = `http://127.0.0.1:${baselinePort}`;
  // A Redis of its own, so each Redis's commands per batch are one gateway's.
  const baselineRedis = BASELINE && BASELINE_REDIS ? await startRedis() : null;
  const baseline = BASELINE ? spawnTs('src/main.ts', gatewayEnv(baselinePort, baselineRedis ? { REDIS_URL: baselineRedis.url, REDIS_PREFIX: 'bench:' } : {}), [], BASELINE) : null;
  const enginePool = new Pool(engineUrl, { connections: N });
  const gatewayPool = new Pool(gatewayUrl, { connections: 1 });
  const redisPool = new Pool(redisGwUrl, { connections: 1 });
  const baselinePool = new Pool(baselineUrl, { connections: 1 });
  try {
    await waitHealthy(engineUrl);
    await waitHealthy(gatewayUrl);
    if (redisGateway) await waitHealthy(redisGwUrl);
    if (baseline) await waitHealthy(baselineUrl);
    const signer = await localParty('bench');
    // A session made through each gateway, so each has learned its key (no database here, so a
    // gateway knows only the sessions made through it): a gateway that does not know the session
    // cannot verify any item, spends nothing in its replay memory and charges no party budget,
    // which is not the path a batch takes in service.
    const sessionThrough = async (url: string): Promise<Session> => {
      const client = new GatewayClient({ baseUrl: url, retry: { retries: 0 } });
      const created = await client.createSession(signer);
      if (!created.ok) throw new Error(created.code);
      return client.session!;
    };
    const s = await sessionThrough(gatewayUrl);
    const sRedis = redisGateway ? await sessionThrough(redisGwUrl) : s;
    const sBase = baseline ? await sessionThrough(baselineUrl) : s;
    const funded = await request(`${engineUrl}/v1/admin/faucet`, { method: 'POST', body: JSON.stringify({ party: s.party, amount: '100000000' }), headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` } });
    await funded.body.dump();
    if (redisGateway) await batchReady(redisPool, sRedis, 'the Redis gateway');
    if (baselineRedis) await batchReady(baselinePool, sBase, 'the baseline gateway');
    const ways: Way[] = BATCH_ONLY ? ['batch'] : ['floor', 'batch', ...(redisGateway ? (['redis'] as const) : []), ...(baseline ? (['baseline'] as const) : []), ...(WITH_SERIAL ? (['serial'] as const) : [])];
    // The issue's comparison (floor, batch, serial; a baseline in process memory beside them) runs in
    // rounds of its own, and the fleet's gateway on Redis in rounds of its own against the floor
    // again: run in the same rounds, the Redis way's work (its gateway, Redis) spilled into the ways
    // measured after it, and the in-memory batch measured 1.21–1.30× the floor in four quiet runs
    // against 1.10–1.16× in three without it (2026-11-27, load 1.2–1.8; docs/performance.md).
    const redisWays = (w: Way) => w === 'redis' || (w === 'baseline' && BASELINE_REDIS);
    const mainWays = ways.filter((w) => !redisWays(w));
    const fleetWays: Way[] = ways.some(redisWays) ? ['floor', ...ways.filter(redisWays)] : [];
    const pidOf = (way: Way) => (way === 'baseline' ? baseline!.pid : way === 'redis' ? redisGateway!.pid : gateway.pid);
    const sessionOf = (way: Way) => (way === 'redis' ? sRedis : way === 'baseline' ? sBase : s);
    const run = (way: Way, orders: Signed[]): Promise<number> =>
      way === 'floor'
        ? floor(enginePool, s, orders)
        : way === 'batch'
          ? batch(gatewayPool, s, orders)
          : way === 'redis'
            ? batch(redisPool, sRedis, orders)
            : way === 'baseline'
              ? batch(baselinePool, sBase, orders)
              : serial(gatewayPool, s, orders);
    // Warm-up: connections (the gateways' 50 to the engine), JIT.
    for (let i = 0; i < sized(3, 1); i++) for (const way of ways) await run(way, await presign(sessionOf(way), N));

    /** The phase's rounds over the main ways, then (with Redis) over the fleet ways, as one row of results. */
    const phase = async (name: PhaseResult['name'], placement: string): Promise<PhaseResult> => {
      const main = await rounds(name, placement, mainWays);
      if (fleetWays.length === 0) return main;
      const fleet = await rounds(name, placement, fleetWays);
      const pick = <T>(a: Partial<Record<Way, T>>, b: Partial<Record<Way, T>>): Partial<Record<Way, T>> => ({ ...a, ...Object.fromEntries(fleetWays.filter((w) => w !== 'floor').map((w) => [w, b[w]])) });
      return {
        ...main,
        medianMs: pick(main.medianMs, fleet.medianMs),
        redisRatio: fleet.redisRatio,
        baselineRatio: BASELINE_REDIS ? fleet.baselineRatio : main.baselineRatio,
        gatewayCpuMsPer50: pick(main.gatewayCpuMsPer50, fleet.gatewayCpuMsPer50),
        redisCommandsPerBatch: fleet.redisCommandsPerBatch,
        loadAverage1m: { before: main.loadAverage1m.before, after: fleet.loadAverage1m.after },
      };
    };

    const rounds = async (name: PhaseResult['name'], placement: string, ways: Way[]): Promise<PhaseResult> => {
      const times: Record<Way, number[]> = { floor: [], batch: [], redis: [], serial: [], baseline: [] };
      const cpu: Record<Way, number> = { floor: 0, batch: 0, redis: 0, serial: 0, baseline: 0 };
      const loadBefore = loadavg()[0]!;
      const callsBefore = { redis: redis ? redisScriptCalls(redis.url) : 0, baseline: baselineRedis ? redisScriptCalls(baselineRedis.url) : 0 };
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? ways : [...ways].reverse();
        const runs: Record<Way, number[]> = { floor: [], batch: [], redis: [], serial: [], baseline: [] };
        for (let k = 0; k < REPEAT; k++) {
          for (const way of order) {
            const orders = await presign(sessionOf(way), N); // signed just before: well inside the ±30 s window
            const pid = pidOf(way);
            const cpu0 = procCpuMs(pid) ?? 0;
            runs[way].push(await run(way, orders));
            cpu[way] += (procCpuMs(pid) ?? 0) - cpu0;
          }
        }
        for (const way of ways) times[way].push(median(runs[way]));
      }
      const ratios = (way: Way) => {
        if (times[way].length === 0 || times.floor.length === 0) return null;
        const rs = times[way].map((t, i) => t / times.floor[i]!);
        return { median: round2(median(rs)), p25: round2(quantile(rs, 0.25)), p75: round2(quantile(rs, 0.75)), roundsWithin: rs.filter((x) => x <= 1.2).length };
      };
      const medianMs: Partial<Record<Way, number>> = {};
      const cpuPer50: Partial<Record<Way, number>> = {};
      for (const way of ways) {
        medianMs[way] = round2(median(times[way]));
        if (way !== 'floor') cpuPer50[way] = round2(cpu[way] / (ROUNDS * REPEAT));
      }
      return {
        name,
        placement,
        medianMs,
        ratio: ratios('batch') ?? { median: NaN, p25: NaN, p75: NaN, roundsWithin: 0 },
        redisRatio: ways.includes('redis') ? ratios('redis') : null,
        baselineRatio: ways.includes('baseline') ? ratios('baseline')!.median : null,
        gatewayCpuMsPer50: cpuPer50,
        redisCommandsPerBatch: {
          redis: redis ? round2((redisScriptCalls(redis.url) - callsBefore.redis) / (ROUNDS * REPEAT)) : null,
          baseline: baselineRedis ? round2((redisScriptCalls(baselineRedis.url) - callsBefore.baseline) / (ROUNDS * REPEAT)) : null,
        },
        loadAverage1m: { before: round2(loadBefore), after: round2(loadavg()[0]!) },
      };
    };

    const phases: PhaseResult[] = [await phase('unpinned', 'nothing pinned: engine, gateways, Redis and the bench client share both cores')];
    if (PIN) {
      pin(engine.pid, '0');
      for (const p of [gateway, redisGateway, baseline, redis?.proc, baselineRedis?.proc]) if (p) pin(p.pid, '1');
      pin(process.pid, '1');
      phases.push(await phase('pinned', 'engine (all threads) on CPU 0; bench client, gateways and Redis on CPU 1'));
    }
    for (const p of phases) {
      shortFigure(`${p.name} batch / floor`, p.ratio.median);
      if (redisGateway) shortFigure(`${p.name} Redis batch / floor`, p.redisRatio?.median);
      if (redis) shortFigure(`${p.name} Redis script calls per batch`, p.redisCommandsPerBatch.redis);
    }
    const result = {
      rounds: ROUNDS,
      repeat: REPEAT,
      orders: N,
      phases,
      ...(baseline ? { baselineLabel: process.env.BENCH_BATCH_BASELINE_LABEL ?? 'another checkout', baselineDir: BASELINE } : {}),
      machine: { nproc: cpus().length, model: cpus()[0]?.model ?? '?', node: process.version, taskset: PIN },
    };
    console.log(JSON.stringify(result, null, 2));
    if (!BATCH_ONLY && !PROF_DIR) writeDocs(result);
  } finally {
    await enginePool.close();
    await gatewayPool.close();
    await redisPool.close();
    await baselinePool.close();
    await stop(gateway);
    if (redisGateway) await stop(redisGateway);
    if (baseline) await stop(baseline);
    if (redis) await stop(redis.proc);
    if (baselineRedis) await stop(baselineRedis.proc);
    await stop(engine);
  }
}

function writeDocs(r: { rounds: number; repeat: number; orders: number; phases: PhaseResult[]; baselineLabel?: string; machine: { nproc: number; model: string; node: string } }): void {
  const verdict = (x: number) => (x <= 1.2 ? `**met** (${x}×)` : `**not met** (${x}×)`);
  const ms = (x: number | undefined) => (x === undefined ? '–' : `${x} ms`);
  const lines = [
    '## A batch of 50 orders (`npm run bench:proxy`, bench/proxy-batch.ts)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.nproc} × ${r.machine.model}, Node ${r.machine.node}; the machine was shared with other work (1-minute load averages per phase below). The engine, the gateway (replay memory and budgets in process memory) and, where shown, a second gateway on a Redis of the bench's own run as separate processes, the client in the bench process. ${r.rounds} rounds per phase of the floor, the batch and the serial calls, then (where shown) ${r.rounds} rounds of the floor and the gateway on Redis (run in the same rounds, the Redis way's work spilled into the ways measured after it); a round places ${r.orders} pre-signed limit orders every way ${r.repeat} times, interleaved (floor first, then the reverse order the next round), and takes each way's median of its ${r.repeat} runs. A round's batch / floor compares runs made side by side; the target (≤ 1.2×) is judged on the median of those per-round ratios. Times: the median over rounds of the time from the first byte sent to the last answer read; CPU: the gateway process's, per 50 orders (/proc).`,
    '',
    '| Phase (placement) | Load 1 m before → after | Floor: 50 straight to the engine (50 connections) | One batch of 50 (gateway CPU) | Batch / floor per round: median (p25–p75), rounds ≤ 1.2× | One batch of 50, gateway on Redis (CPU) | Redis batch / floor per round | 50 single calls one after another (CPU) |',
    '|---|---|---|---|---|---|---|---|',
    ...r.phases.map((p) =>
      `| ${p.name} (${p.placement}) | ${p.loadAverage1m.before} → ${p.loadAverage1m.after} | ${ms(p.medianMs.floor)} | ${ms(p.medianMs.batch)} (${p.gatewayCpuMsPer50.batch} ms) | ${verdict(p.ratio.median)} (${p.ratio.p25}–${p.ratio.p75}), ${p.ratio.roundsWithin}/${r.rounds} | ${p.redisRatio ? `${ms(p.medianMs.redis)} (${p.gatewayCpuMsPer50.redis} ms; ${p.redisCommandsPerBatch.redis} Redis script calls a batch)` : '–'} | ${p.redisRatio ? `${p.redisRatio.median}× (${p.redisRatio.p25}–${p.redisRatio.p75}), ${p.redisRatio.roundsWithin}/${r.rounds} ≤ 1.2×` : '–'} | ${ms(p.medianMs.serial)} (${p.gatewayCpuMsPer50.serial} ms) |`,
    ),
    ...(r.baselineLabel ? ['', `Before (\`BENCH_BATCH_BASELINE\`: ${r.baselineLabel}${BASELINE_REDIS ? ', on a Redis of its own' : ''}), the same batch in the same rounds: ${r.phases.map((p) => `${p.name} ${ms(p.medianMs.baseline)} (${p.baselineRatio}× the floor per round, gateway CPU ${p.gatewayCpuMsPer50.baseline} ms${p.redisCommandsPerBatch.baseline !== null ? `, ${p.redisCommandsPerBatch.baseline} Redis script calls a batch` : ''})`).join(', ')}.`] : []),
  ];
  writeDocsBlock('batch-bench', lines);
}

await main();
