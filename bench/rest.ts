/**
 * REST read benchmark (`npm run bench:rest`).
 *
 * Seeds a fresh schema of the local PostgreSQL with the seed generator (default 1 000 000 fill legs,
 * which brings ~500 000 orders and ~1 250 000 events), starts the gateway as its own process on it,
 * and runs autocannon against the main reads for a few seconds each. Prints JSON and writes the
 * block between the rest-bench markers of docs/performance.md (other sections are kept).
 *
 * Settings: BENCH_DATABASE_URL (server, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_REST_FILLS, BENCH_REST_PARTIES, BENCH_REST_SECONDS, BENCH_REST_CONNECTIONS, BENCH_KEEP=1
 * (keep the schema, named in the output).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate } from '../schema/migrate.js';
import { seed } from '../sandbox/seed/index.js';
import { freePort, stop, waitHealthy } from './processes.js';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const FILLS = Number(process.env.BENCH_REST_FILLS ?? 1_000_000);
const PARTIES = Number(process.env.BENCH_REST_PARTIES ?? 500);
const SECONDS = Number(process.env.BENCH_REST_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_REST_CONNECTIONS ?? 16);




function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('search_path', schema);
  return u.toString();
}

async function main(): Promise<void> {
  const schema = `bench_rest_${Date.now().toString(36)}`;
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const url = withSchema(SERVER, schema);
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  let gateway: ChildProcess | undefined;
  try {
    await migrate(sql);
    const seeded = await seed(sql, { seed: 2026, parties: PARTIES, fills: FILLS, batchEvery: 5_000 });
    const analyzeStarted = performance.now();
    await sql`ANALYZE`;
    console.error(`seeded ${JSON.stringify(seeded.counts)} in ${seeded.elapsedMs} ms (+ANALYZE ${Math.round(performance.now() - analyzeStarted)} ms)`);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    gateway = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: url,
        AUTH_DISABLED: 'true',
        LOG_LEVEL: 'warn',
        DB_POOL_MAX: '16',
        RATE_LIMIT_MAX: '10000000',
        ENGINE_BASE_URL: 'http://127.0.0.1:9',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitHealthy(base);

    const party = seeded.parties[7]!;
    const mid = Math.floor(seeded.maxSeq / 2);
    const reads: Array<[string, string]> = [
      ['`GET /v1/fills?limit=100`', '/v1/fills?limit=100'],
      [`\`GET /v1/fills?before=<mid>&limit=100\``, `/v1/fills?before=${mid}&limit=100`],
      ['`GET /v1/fills?market=SOL-PERP&limit=100`', '/v1/fills?market=SOL-PERP&limit=100'],
      ['`GET /v1/users/:party/fills?limit=100`', `/v1/users/${party}/fills?limit=100`],
      ['`GET /v1/orders?limit=100`', '/v1/orders?limit=100'],
      ['`GET /v1/orders?status=open&limit=100`', '/v1/orders?status=open&limit=100'],
      ['`GET /v1/users/:party/positions?status=all`', `/v1/users/${party}/positions?status=all`],
      ['`GET /v1/users/:party/triggers`', `/v1/users/${party}/triggers`],
      ['`GET /v1/users/:party/balance`', `/v1/users/${party}/balance`],
      ['`GET /v1/events?since=<mid>&limit=100`', `/v1/events?since=${mid}&limit=100`],
      ['`GET /v1/verifications/user-batches?status=mismatch`', '/v1/verifications/user-batches?status=mismatch'],
      ['`GET /v1/deposits?limit=100`', '/v1/deposits?limit=100'],
    ];
    // Warm the pool and the plan cache before measuring.
    for (const [, path] of reads) await autocannon({ url: base + path, connections: 4, amount: 200 });
    const results = [];
    for (const [name, path] of reads) {
      const r = await autocannon({ url: base + path, connections: CONNECTIONS, duration: SECONDS });
      results.push({ name, path, requestsPerSec: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });
      console.error(`${name}: ${Math.round(r.requests.average)} req/s p50 ${r.latency.p50} ms p99 ${r.latency.p99} ms non2xx ${r.non2xx}`);
    }
    const report = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', node: process.version },
      data: { ...seeded.counts, seedMs: seeded.elapsedMs },
      connections: CONNECTIONS,
      seconds: SECONDS,
      results,
      schema: process.env.BENCH_KEEP === '1' ? schema : null,
    };
    console.log(JSON.stringify(report, null, 2));
    writeDocs(report);
  } finally {
    if (gateway) await stop(gateway);
    await sql.end({ timeout: 5 });
    if (process.env.BENCH_KEEP !== '1') await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end({ timeout: 5 });
  }
}

function writeDocs(r: {
  machine: { cpus: number; model: string; node: string };
  data: Record<string, number>;
  connections: number;
  seconds: number;
  results: Array<{ name: string; requestsPerSec: number; p50: number; p99: number; non2xx: number }>;
}): void {
  const file = join(ROOT, 'docs/performance.md');
  const d = r.data;
  const block = [
    '<!-- rest-bench:start -->',
    '## REST reads (`npm run bench:rest`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}. Data: ${d.fills} fill legs, ${d.orders} orders, ${d.events} events, ${d.positions} positions, ${d.triggers} triggers, seeded by \`sandbox/seed\` in ${Math.round(d.seedMs! / 1000)} s. The gateway runs as its own process against the local PostgreSQL (same host); autocannon (${r.connections} keep-alive connections, ${r.seconds} s per read) runs in a third process, so the three share the cores.`,
    '',
    '| Read | req/s | p50 | p99 | non-2xx |',
    '|---|---|---|---|---|',
    ...r.results.map((x) => `| ${x.name} | ${x.requestsPerSec} | ${x.p50} ms | ${x.p99} ms | ${x.non2xx} |`),
    '',
    'List reads return 100 full rows per request, so they are bounded by row decoding and JSON serialisation in the gateway process; the balance read is one index probe. A status-filtered verification examines a window of up to 10 000 claims per request (about 100 ms of database time), which bounds it whatever the claim count. Rerun with `BENCH_REST_FILLS`, `BENCH_REST_SECONDS`, `BENCH_REST_CONNECTIONS`.',
    '<!-- rest-bench:end -->',
  ].join('\n');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = text.indexOf('<!-- rest-bench:start -->');
  const end = text.indexOf('<!-- rest-bench:end -->');
  if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + '<!-- rest-bench:end -->'.length);
  else text = text.length === 0 ? `${block}\n` : `${text.replace(/\n*$/, '\n\n')}${block}\n`;
  writeFileSync(file, text);
}

await main();
