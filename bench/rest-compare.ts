// What `bench:rest` needs to compare the gateway with its peer and floor on one core each:
// pinned server processes, a pinned load generator (autocannon's CLI, or pgbench) and the gateway's
// exact statements captured from its own query code.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import postgres from 'postgres';
import { hasTaskset, stopWithBench } from './processes.js';
import { SAMPLE_MS, SHORT, perSecond } from './short.js';

/** CPU of the servers, CPU of the load generator (null: no taskset, nothing pinned). */
export const PIN = hasTaskset() ? { server: '1', load: '0' } : null;

const pinned = (cpu: string | undefined, cmd: string, args: string[]): [string, string[]] =>
  PIN && cpu !== undefined ? ['taskset', ['-c', cpu, cmd, ...args]] : [cmd, args];

/**
 * Starts a Node server process (tsx), pinned to the servers' CPU. BENCH_CPU_PROF=<dir>: each server
 * writes a CPU profile there when it stops (`node --cpu-prof`).
 */
export function startServer(root: string, entry: string, env: Record<string, string>): ChildProcess {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const [cmd, args] = pinned(PIN?.server, process.execPath, [...profile, '--import', 'tsx', join(root, entry)]);
  return stopWithBench(spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] }));
}

export interface LoadResult {
  requestsPerSec: number;
  /** Requests answered in the run (for the server's CPU time per request). */
  total?: number;
  /** The server process's CPU time (user + system, all threads) per request, ms. */
  cpuMs?: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

type AutocannonJson = { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };
const autocannonRun = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonJson>;
/** Requests per load in a short run (a whole number of rounds of the connections). */
const SHORT_AMOUNT = 2;
let cliChecked = false;

/**
 * autocannon (its CLI, in its own process on the load CPU) against one URL. A short run sends
 * `connections` × 2 requests instead of `seconds` of load, and runs the CLI only for its first load
 * (the path is checked once): a CLI process took about 1 s to start on the loaded machine, and a
 * short bench:rest makes about 60 loads; the others run in this process.
 */
export function load(root: string, url: string, connections: number, seconds: number): Promise<LoadResult> {
  if (SHORT && cliChecked) {
    return autocannonRun({ url, connections, amount: connections * SHORT_AMOUNT, sampleInt: SAMPLE_MS }).then((r) => loadResult(r));
  }
  cliChecked = true;
  const bin = join(root, 'node_modules', 'autocannon', 'autocannon.js');
  const length = SHORT ? ['-a', String(connections * SHORT_AMOUNT), '-L', String(SAMPLE_MS)] : ['-d', String(seconds)];
  const [cmd, args] = pinned(PIN?.load, process.execPath, [bin, '-c', String(connections), ...length, '--json', url]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      try {
        resolve(loadResult(JSON.parse(out) as AutocannonJson));
      } catch (err) {
        reject(new Error(`autocannon gave no result for ${url}: ${String(err)}`));
      }
    });
  });
}

function loadResult(r: AutocannonJson): LoadResult {
  return { requestsPerSec: Math.round(perSecond(r.requests.average)), total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

/** The pgbench of the installed PostgreSQL (PGBENCH overrides), or null. */
export function findPgbench(): string | null {
  if (process.env.PGBENCH) return process.env.PGBENCH;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  for (const v of readdirSync(base).sort().reverse()) {
    const p = join(base, v, 'bin', 'pgbench');
    if (existsSync(p)) return p;
  }
  return null;
}

/** What pgbench measured: transactions/s, and the latency percentiles of its per-transaction log (ms). */
export interface Floor {
  tps: number;
  p50: number;
  p99: number;
}

/**
 * pgbench running one statement with `clients` connections for `seconds`, on the load CPU (prepared
 * statements, as the gateway's driver uses), with a per-transaction log for the latency
 * percentiles. `url` carries the search_path.
 */
export function pgbench(bin: string, url: string, statement: string, clients: number, seconds: number): Floor | null {
  const dir = mkdtempSync(join(tmpdir(), 'bench-rest-pgbench-'));
  const file = join(dir, 'statement.sql');
  writeFileSync(file, `${statement};\n`);
  const u = new URL(url);
  const schema = u.searchParams.get('search_path') ?? 'public';
  const [cmd, args] = pinned(PIN?.load, bin, [
    // A short run: 2 transactions per client instead of `seconds` (pgbench's -T is whole seconds).
    '-n', '-M', 'prepared', '-c', String(clients), '-j', '1', ...(SHORT ? ['-t', '2'] : ['-T', String(seconds)]), '-f', file,
    '-l', `--log-prefix=${join(dir, 'log')}`,
    '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'), u.pathname.slice(1) || 'postgres',
  ]);
  try {
    const out = execFileSync(cmd, args, { env: { ...process.env, PGOPTIONS: `-c search_path=${schema}` }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const m = /tps = ([\d.]+)/.exec(out);
    if (!m) return null;
    // Log lines: client_id transaction_no time(µs) script_no time_epoch time_us
    const latencies: number[] = [];
    for (const name of readdirSync(dir).filter((f) => f.startsWith('log'))) {
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (line && Number.isFinite(us)) latencies.push(us / 1000);
      }
    }
    latencies.sort((x, y) => x - y);
    const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 10) / 10;
    return { tps: Math.round(Number(m[1])), p50: at(0.5), p99: at(0.99) };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The first statement a gateway query function sends, with its parameters inlined as literals (for
 * pgbench). Runs the function on a connection set up as the gateway's, with the driver's debug hook.
 */
export async function captureStatement(url: string, run: (sql: postgres.Sql) => Promise<unknown>): Promise<string> {
  const captured: Array<{ query: string; params: unknown[] }> = [];
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    transform: { column: { from: postgres.toCamel } },
    debug: (_c, query, params) => void captured.push({ query, params: params as unknown[] }),
  });
  try {
    await run(sql);
  } finally {
    await sql.end({ timeout: 2 });
  }
  const first = captured[0];
  if (!first) throw new Error('the query function sent no statement');
  return first.query.replace(/\$(\d+)/g, (_m, n: string) => {
    const v = first.params[Number(n) - 1];
    return typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
  });
}

export function ratio(a: number, b: number): string {
  return b > 0 ? `${(a / b).toFixed(2)}×` : '—';
}
