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
 * (keep the schema, named in the output), BENCH_REST_SCHEMA=<kept schema> (measure it again without
 * seeding; it is kept).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate } from '../schema/migrate.js';
import { seed } from '../sandbox/seed/index.js';
import { freePort, stop, waitHealthy } from './processes.js';
import { RollingStats } from '../src/markets/rolling-stats.js';
import { candlePage } from '../src/db/queries/candle-history.js';
import { INTERVAL_MS } from '../src/projections/candles.js';
import { CANDLE_INTERVALS } from '../src/contracts/frame.js';
import { proofBench } from './rest-proof.js';

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

/** One-minute load average when the run began: the cores are often shared with other work. */
let loadAtStart = 0;

/** What a kept schema holds, as `seed` would have reported it (seed time unknown: 0). */
async function describeKept(sql: postgres.Sql) {
  const [head] = await sql<{ max_seq: string; first_ts: Date }[]>`
    SELECT (SELECT max(seq) FROM events) AS max_seq, (SELECT ts FROM events ORDER BY seq LIMIT 1) AS first_ts`;
  const parties = (await sql<{ party: string }[]>`SELECT party FROM withdrawal_counters ORDER BY party`).map((r) => r.party);
  const counts: Record<string, number> = {};
  for (const t of ['fills', 'orders', 'events', 'positions', 'triggers']) {
    counts[t] = Number((await sql.unsafe(`SELECT count(*) AS n FROM ${t}`))[0]!.n);
  }
  return { maxSeq: Number(head!.max_seq), startMs: head!.first_ts.getTime() - 250, parties, counts, elapsedMs: 0 };
}

async function main(): Promise<void> {
  loadAtStart = Math.round(loadavg()[0]! * 10) / 10;
  const reuse = process.env.BENCH_REST_SCHEMA;
  const schema = reuse ?? `bench_rest_${Date.now().toString(36)}`;
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} });
  if (!reuse) await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const url = withSchema(SERVER, schema);
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  let gateway: ChildProcess | undefined;
  try {
    // The seed stamps seq n at startMs + n × 250 ms (about 1.31 events per fill leg): start it so the
    // history ends about now, so the 24 h statistics cover a full day of matches (~28 % of the fills).
    let startMs = Date.now() - Math.round(FILLS * 1.31) * 250;
    let seeded: { maxSeq: number; parties: string[]; counts: Record<string, number>; elapsedMs: number };
    if (reuse) {
      ({ startMs, ...seeded } = await describeKept(sql));
      console.error(`reusing ${schema}: ${JSON.stringify(seeded.counts)}`);
    } else {
      await migrate(sql);
      seeded = await seed(sql, { seed: 2026, parties: PARTIES, fills: FILLS, batchEvery: 5_000, startMs });
      const analyzeStarted = performance.now();
      await sql`ANALYZE`;
      console.error(`seeded ${JSON.stringify(seeded.counts)} in ${seeded.elapsedMs} ms (+ANALYZE ${Math.round(performance.now() - analyzeStarted)} ms)`);
    }

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
      ['`GET /v1/markets` (stats cached 1 s)', '/v1/markets'],
      ['`GET /v1/markets/BTC-PERP`', '/v1/markets/BTC-PERP'],
      ...CANDLE_INTERVALS.map((i): [string, string] => [`\`GET /v1/candles?market=BTC-PERP&interval=${i}\``, `/v1/candles?market=BTC-PERP&interval=${i}`]),
      [`\`GET /v1/candles?market=ETH-PERP&interval=1h&to=<mid>\``, `/v1/candles?market=ETH-PERP&interval=1h&to=${startMs + mid * 250}`],
    ];
    const queries = await timeQueries(url, startMs + seeded.maxSeq * 250);
    // Warm the pool and the plan cache before measuring.
    for (const [, path] of reads) await autocannon({ url: base + path, connections: 4, amount: path.startsWith('/v1/candles') ? 20 : 200 });
    const results = [];
    for (const [name, path] of reads) {
      const r = await autocannon({ url: base + path, connections: CONNECTIONS, duration: SECONDS });
      results.push({ name, path, requestsPerSec: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });
      console.error(`${name}: ${Math.round(r.requests.average)} req/s p50 ${r.latency.p50} ms p99 ${r.latency.p99} ms non2xx ${r.non2xx}`);
    }
    const report = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, load: loadAtStart },
      data: { ...seeded.counts, seedMs: seeded.elapsedMs },
      connections: CONNECTIONS,
      seconds: SECONDS,
      results,
      queries,
      schema: process.env.BENCH_KEEP === '1' || reuse ? schema : null,
    };
    console.log(JSON.stringify(report, null, 2));
    writeDocs(report);
  } finally {
    if (gateway) await stop(gateway);
    await sql.end({ timeout: 5 });
    if (process.env.BENCH_KEEP !== '1' && !reuse) await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end({ timeout: 5 });
  }
}

/**
 * Database time of the statements behind the uncached markets and candle reads, measured alone (no
 * HTTP, no concurrency): the median of 5 runs after one warm-up, through a connection set up as
 * the gateway's (camelCase columns, int8 as numbers).
 */
async function timeQueries(url: string, endMs: number): Promise<Array<{ name: string; ms: number; rows: number }>> {
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    transform: { column: { from: postgres.toCamel } },
    types: { int8: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } } as never,
  });
  const cases: Array<[string, () => Promise<number>]> = [
    // A fresh RollingStats each time: the first read of the window's full minutes.
    ['24 h statistics of every market, first read', async () => (await new RollingStats().refresh(sql, endMs)).byMarket.size],
    // The same instance again, 1 s later: only the seqs added since, and the window's oldest minute.
    ['24 h statistics of every market, a refresh', async () => {
      const rolling = new RollingStats();
      await rolling.refresh(sql, endMs - 1_000);
      const t = performance.now();
      const size = (await rolling.refresh(sql, endMs)).byMarket.size;
      refreshMs.push(performance.now() - t);
      return size;
    }],
    ...CANDLE_INTERVALS.map((i): [string, () => Promise<number>] => [
      `candles BTC-PERP ${i}, newest 100`,
      async () => (await candlePage(sql, { market: 'BTC-PERP', lengthMs: INTERVAL_MS[i], limit: 100 })).bars.length,
    ]),
  ];
  const out = [];
  const refreshMs: number[] = [];
  try {
    for (const [name, run] of cases) {
      refreshMs.length = 0;
      await run();
      const times: number[] = [];
      let rows = 0;
      for (let k = 0; k < 5; k++) {
        const t = performance.now();
        rows = await run();
        times.push(performance.now() - t);
      }
      if (refreshMs.length) times.splice(0, times.length, ...refreshMs.slice(-5));
      times.sort((a, b) => a - b);
      out.push({ name, ms: Math.round(times[2]! * 10) / 10, rows });
      console.error(`${name}: ${Math.round(times[2]!)} ms (${rows} rows)`);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
  return out;
}

function writeDocs(r: {
  machine: { cpus: number; model: string; node: string; load: number };
  data: Record<string, number>;
  connections: number;
  seconds: number;
  results: Array<{ name: string; requestsPerSec: number; p50: number; p99: number; non2xx: number }>;
  queries: Array<{ name: string; ms: number; rows: number }>;
}): void {
  const file = join(ROOT, 'docs/performance.md');
  const d = r.data;
  const block = [
    '<!-- rest-bench:start -->',
    '## REST reads (`npm run bench:rest`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}. Data: ${d.fills} fill legs, ${d.orders} orders, ${d.events} events, ${d.positions} positions, ${d.triggers} triggers, seeded by \`sandbox/seed\`${d.seedMs ? ` in ${Math.round(d.seedMs / 1000)} s` : ' (a kept schema, measured again)'}. The gateway runs as its own process against the local PostgreSQL (same host); autocannon (${r.connections} keep-alive connections, ${r.seconds} s per read) runs in a third process, so the three share the cores (one-minute load average ${r.machine.load} when the run began).`,
    '',
    '| Read | req/s | p50 | p99 | non-2xx |',
    '|---|---|---|---|---|',
    ...r.results.map((x) => `| ${x.name} | ${x.requestsPerSec} | ${x.p50} ms | ${x.p99} ms | ${x.non2xx} |`),
    '',
    'Database time of the uncached markets and candle statements, alone (median of 5):',
    '',
    '| Statement | ms | rows |',
    '|---|---|---|',
    ...r.queries.map((q) => `| ${q.name} | ${q.ms} | ${q.rows} |`),
    '',
    'The seed history is stamped to end at the time of the run, so the 24 h statistics cover a full day (about a quarter of the fills). The history spans about 3.8 days, so a page of 100 `1h`, `4h` or `1d` bars covers all of it: every match of the market (about 166 000 for BTC-PERP) is aggregated, which costs most of a second of database time on this machine; the `1m` and `5m` pages read only the rows of their 100 buckets. The first read of the statistics covers the full minutes of the day (a quarter of the fills); a refresh reads only the seqs added since and the oldest minute of the window (here nothing is added: the row shows the floor of a refresh). The gateway answers identical markets and candle requests within a second from one database read (the statistics once a second, a candle page once a second per distinct query), so the req/s of those rows is mostly that sharing: the statement table above is the cost of a first, uncached request.',
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

if (process.env.BENCH_REST_ONLY !== 'proof') await main();
await proofBench(SERVER, SECONDS, CONNECTIONS);
