/**
 * REST read benchmark (`npm run bench:rest`).
 *
 * Seeds a fresh schema of the local PostgreSQL with the seed generator (default 300 000 fill legs,
 * which brings ~155 000 orders and ~390 000 events), then measures every list read three ways in
 * the same run, against the same data and SQL:
 *   - the gateway (its own process, default settings: identical concurrent reads shared),
 *   - the gateway reading each request alone (LIST_SHARED_READS=false; rows kept by version reused),
 *   - the gateway with nothing shared and nothing kept (LIST_SHARED_READS=false, LIST_ROW_CACHE_BYTES=0),
 *   - the 30-line peer (bench/rest-peer.ts: Fastify 5 + postgres.js, same pool size, the gateway's
 *     statement, plain `return rows`),
 * and the floor: pgbench (PostgreSQL's C client) running the gateway's exact statement (captured from
 * the gateway's own query code through the driver's debug hook, parameters inlined).
 * The servers are pinned to CPU 1 and the load generator (autocannon, or pgbench) to CPU 0
 * (`taskset`), and the three servers are measured alternately (A B C A B C) so the machine's drift
 * hits all alike. Then the other reads (verifications, balance, markets, candles) on the gateway
 * alone. Prints JSON and writes the block between the rest-bench markers of docs/performance.md.
 *
 * Settings: BENCH_DATABASE_URL (server, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_REST_FILLS, BENCH_REST_PARTIES, BENCH_REST_SECONDS, BENCH_REST_CONNECTIONS, BENCH_REST_ROUNDS
 * (alternations, default 2), BENCH_KEEP=1 (keep the schema, named in the output),
 * BENCH_REST_SCHEMA=<kept schema> (measure it again without seeding; it is kept), PGBENCH (path),
 * BENCH_REST_ONLY (`proof`: only the proof part; otherwise comma-separated fragments of the paths to
 * measure, e.g. `events,status=mismatch`; docs/performance.md is then left alone),
 * BENCH_CPU_PROF=<dir> (every server writes a CPU profile there when it stops).
 */
import { SAMPLE_MS, shortCheck, sized } from './short.js';
import { writeDocsFile } from './docs-block.js';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate } from '../schema/migrate.js';
import { seed } from '../sandbox/seed/index.js';
import { freePort, procCpuMs, stop, waitHealthy } from './processes.js';
import { captureStatement, findPgbench, load, pgbench, PIN, ratio, startServer, type Floor, type LoadResult } from './rest-compare.js';
import { listFillsJson } from '../src/db/queries/fills.js';
import { listOrdersJson } from '../src/db/queries/orders.js';
import { listPositionsJson } from '../src/db/queries/positions.js';
import { listTriggersJson } from '../src/db/queries/triggers.js';
import { listEventsJson } from '../src/db/queries/events.js';
import { listDepositsJson } from '../src/db/queries/collateral.js';
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
const FILLS = Number(process.env.BENCH_REST_FILLS ?? sized(300_000, 5_000));
const ROUNDS = Number(process.env.BENCH_REST_ROUNDS ?? sized(2, 1));
const PARTIES = Number(process.env.BENCH_REST_PARTIES ?? sized(500, 20));
const SECONDS = Number(process.env.BENCH_REST_SECONDS ?? sized(5, 1));
// A short run: 4 connections (its loads are 2 requests a connection; pgbench then opens 4 backends, not 16).
const CONNECTIONS = Number(process.env.BENCH_REST_CONNECTIONS ?? sized(16, 4));




function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('search_path', schema);
  return u.toString();
}

type Server = 'gateway' | 'alone' | 'bare' | 'peer';

/** The mean of alternated runs (req/s, latencies), non-2xx summed. */
function mean(runs: LoadResult[]): LoadResult {
  const avg = (f: (r: LoadResult) => number) => Math.round((runs.reduce((a, r) => a + f(r), 0) / runs.length) * 10) / 10;
  const cpu = runs.every((r) => r.cpuMs !== undefined) ? Math.round((runs.reduce((a, r) => a + r.cpuMs!, 0) / runs.length) * 1000) / 1000 : undefined;
  return {
    ...(cpu !== undefined ? { cpuMs: cpu } : {}),
    requestsPerSec: Math.round(avg((r) => r.requestsPerSec)),
    p50: avg((r) => r.p50),
    p99: avg((r) => r.p99),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
  };
}

/** One request timed alone (the claim index's first build). */
async function timedOnce(url: string): Promise<LoadResult> {
  const t = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  const ms = Math.round(performance.now() - t);
  return { requestsPerSec: 0, p50: ms, p99: ms, non2xx: res.ok ? 0 : 1, errors: 0 };
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
  const children: ChildProcess[] = [];
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

    const gatewayEnv = (port: number, extra: Record<string, string> = {}) => ({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: url,
      AUTH_DISABLED: 'true',
      LOG_LEVEL: 'warn',
      DB_POOL_MAX: '16',
      RATE_LIMIT_MAX: '10000000',
      ENGINE_BASE_URL: 'http://127.0.0.1:9',
      ...extra,
    });
    const party = seeded.parties[7]!;
    const mid = Math.floor(seeded.maxSeq / 2);
    // The list reads the peer serves too, each with the gateway query function behind it (for pgbench).
    const lists: Array<[string, string, (sql: postgres.Sql) => Promise<unknown>]> = [
      ['`GET /v1/fills?limit=100`', '/v1/fills?limit=100', (q) => listFillsJson(q, { limit: 100 })],
      ['`GET /v1/fills?before=<mid>&limit=100`', `/v1/fills?before=${mid}&limit=100`, (q) => listFillsJson(q, { before: mid, limit: 100 })],
      ['`GET /v1/fills?market=SOL-PERP&limit=100`', '/v1/fills?market=SOL-PERP&limit=100', (q) => listFillsJson(q, { market: 'SOL-PERP', limit: 100 })],
      ['`GET /v1/users/:party/fills?limit=100`', `/v1/users/${party}/fills?limit=100`, (q) => listFillsJson(q, { party, limit: 100 })],
      ['`GET /v1/orders?limit=100`', '/v1/orders?limit=100', (q) => listOrdersJson(q, { limit: 100 })],
      ['`GET /v1/orders?status=open&limit=100`', '/v1/orders?status=open&limit=100', (q) => listOrdersJson(q, { statuses: ['open'], limit: 100 })],
      ['`GET /v1/users/:party/positions?status=all`', `/v1/users/${party}/positions?status=all`, (q) => listPositionsJson(q, { party, status: 'all', limit: 100 })],
      ['`GET /v1/users/:party/triggers`', `/v1/users/${party}/triggers`, (q) => listTriggersJson(q, { party, limit: 100 })],
      ['`GET /v1/events?since=<mid>&limit=100`', `/v1/events?since=${mid}&limit=100`, (q) => listEventsJson(q, { since: mid, limit: 100 })],
      ['`GET /v1/deposits?limit=100`', '/v1/deposits?limit=100', (q) => listDepositsJson(q, { limit: 100 })],
    ];
    const reads: Array<[string, string]> = [
      ['`GET /v1/users/:party/balance`', `/v1/users/${party}/balance`],
      ['`GET /v1/verifications/user-batches?status=mismatch` (first request: builds the claim index)', '/v1/verifications/user-batches?status=mismatch'],
      ['`GET /v1/verifications/user-batches?status=mismatch`', '/v1/verifications/user-batches?status=mismatch'],
      ['`GET /v1/verifications/user-batches?status=pending`', '/v1/verifications/user-batches?status=pending'],
      ['`GET /v1/verifications/user-batches?status=match`', '/v1/verifications/user-batches?status=match'],
      ['`GET /v1/verifications/manifests?status=mismatch`', '/v1/verifications/manifests?status=mismatch'],
      ['`GET /v1/verifications/manifests?status=pending`', '/v1/verifications/manifests?status=pending'],
      ['`GET /v1/verifications/manifests?status=match`', '/v1/verifications/manifests?status=match'],
      ['`GET /v1/markets` (stats cached 1 s)', '/v1/markets'],
      ['`GET /v1/markets/BTC-PERP`', '/v1/markets/BTC-PERP'],
      ...CANDLE_INTERVALS.map((i): [string, string] => [`\`GET /v1/candles?market=BTC-PERP&interval=${i}\``, `/v1/candles?market=BTC-PERP&interval=${i}`]),
      [`\`GET /v1/candles?market=ETH-PERP&interval=1h&to=<mid>\``, `/v1/candles?market=ETH-PERP&interval=1h&to=${startMs + mid * 250}`],
    ];
    const only = process.env.BENCH_REST_ONLY?.split(',').filter((x) => x.length > 0);
    if (only) {
      const keep = <T extends [string, string, ...unknown[]]>(list: T[]) => list.filter(([, path]) => only.some((o) => path.includes(o)));
      lists.splice(0, lists.length, ...keep(lists));
      reads.splice(0, reads.length, ...keep(reads));
    }
    const servers: Array<{ id: Server; base: string; pid: number | undefined }> = [];
    // Only the gateway when no list read is measured (BENCH_REST_ONLY naming other reads; bench:tracing's
    // short run): the other servers serve the list comparisons alone.
    for (const id of lists.length > 0 ? (['gateway', 'alone', 'bare', 'peer'] as const) : (['gateway'] as const)) {
      const port = await freePort();
      const child =
        id === 'peer'
          ? startServer(ROOT, 'bench/rest-peer.ts', { PORT: String(port), DATABASE_URL: url, DB_POOL_MAX: '16' })
          : startServer(ROOT, 'src/main.ts', gatewayEnv(port, id === 'alone' ? { LIST_SHARED_READS: 'false' } : id === 'bare' ? { LIST_SHARED_READS: 'false', LIST_ROW_CACHE_BYTES: '0' } : {}));
      children.push(child);
      servers.push({ id, base: `http://127.0.0.1:${port}`, pid: child.pid });
    }
    for (const s of servers) await waitHealthy(s.base);
    const base = servers[0]!.base;

    const queries = only ? [] : await timeQueries(url, startMs + seeded.maxSeq * 250);
    // Warm the pools and plan caches of every server before measuring (not the claim index: its first build is a row).
    const warm = async (url: string, amount: number) => {
      const r = await autocannon({ url, connections: 4, amount: sized(amount, 4), sampleInt: SAMPLE_MS });
      shortCheck(`warm-up ${url}`, { non2xx: r.non2xx, errors: r.errors });
    };
    for (const s of servers) for (const [, path] of lists) await warm(s.base + path, 200);
    for (const [name, path] of reads) {
      if (name.includes('first request') || path.includes('/verifications/')) continue;
      await warm(base + path, path.startsWith('/v1/candles') ? 20 : 200);
    }

    const pgbenchBin = findPgbench();
    const comparisons = [];
    for (const [name, path, query] of lists) {
      const runs: Record<Server, LoadResult[]> = { gateway: [], alone: [], bare: [], peer: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const s of servers) {
          // The server's own CPU time per request: what the read costs it, whatever else the cores run.
          const before = procCpuMs(s.pid);
          const r = await load(ROOT, s.base + path, CONNECTIONS, SECONDS);
          const after = procCpuMs(s.pid);
          if (before !== null && after !== null && r.total) r.cpuMs = (after - before) / r.total;
          runs[s.id].push(r);
        }
      }
      const statement = await captureStatement(url, query);
      const floor = pgbenchBin ? pgbench(pgbenchBin, url, statement, CONNECTIONS, SECONDS) : null;
      const row = { name, path, gateway: mean(runs.gateway), alone: mean(runs.alone), bare: mean(runs.bare), peer: mean(runs.peer), pgbench: floor, statement };
      for (const id of ['gateway', 'alone', 'bare', 'peer'] as const) {
        shortCheck(`${name}, ${id}`, { non2xx: row[id].non2xx, errors: row[id].errors, 'requests/s missing': row[id].requestsPerSec > 0 ? 0 : 1, 'CPU per request missing': row[id].cpuMs === undefined ? 1 : 0 });
      }
      if (pgbenchBin) shortCheck(`${name}, pgbench`, { 'no result': floor ? 0 : 1 });
      comparisons.push(row);
      console.error(`${name}: gateway ${row.gateway.requestsPerSec} p99 ${row.gateway.p99} (alone ${row.alone.requestsPerSec} p99 ${row.alone.p99}, ${row.alone.cpuMs} ms CPU; nothing kept ${row.bare.requestsPerSec} p99 ${row.bare.p99}) peer ${row.peer.requestsPerSec} p99 ${row.peer.p99} (${row.peer.cpuMs} ms CPU) pgbench ${floor?.tps} tps p99 ${floor?.p99}`);
    }
    const results = [];
    for (const [name, path] of reads) {
      const first = name.includes('first request');
      const r = first ? await timedOnce(base + path) : await load(ROOT, base + path, CONNECTIONS, SECONDS);
      results.push({ name, path, ...r });
      shortCheck(name, { non2xx: r.non2xx, errors: r.errors });
      console.error(`${name}: ${r.requestsPerSec} req/s p50 ${r.p50} ms p99 ${r.p99} ms non2xx ${r.non2xx}`);
    }
    const report = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, load: loadAtStart },
      data: { ...seeded.counts, seedMs: seeded.elapsedMs },
      connections: CONNECTIONS,
      seconds: SECONDS,
      pinned: PIN,
      rounds: ROUNDS,
      loadAtEnd: Math.round(loadavg()[0]! * 10) / 10,
      comparisons,
      results,
      queries,
      schema: process.env.BENCH_KEEP === '1' || reuse ? schema : null,
    };
    console.log(JSON.stringify(report, null, 2));
    if (!only) writeDocs(report);
  } finally {
    for (const child of children) await stop(child);
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
  pinned: { server: string; load: string } | null;
  rounds: number;
  loadAtEnd: number;
  comparisons: Array<{ name: string; gateway: LoadResult; alone: LoadResult; bare: LoadResult; peer: LoadResult; pgbench: Floor | null }>;
  results: Array<{ name: string; requestsPerSec: number; p50: number; p99: number; non2xx: number }>;
  queries: Array<{ name: string; ms: number; rows: number }>;
}): void {
  if (process.env.BENCH_NO_DOCS === '1') return; // bench:tracing runs it and writes its own section
  const file = join(ROOT, 'docs/performance.md');
  const d = r.data;
  const placement = r.pinned
    ? `Each server (the gateway, the gateway with \`LIST_SHARED_READS=false\`, the gateway with also \`LIST_ROW_CACHE_BYTES=0\`, the 30-line peer \`bench/rest-peer.ts\`) runs as its own process pinned to CPU ${r.pinned.server}; the load generator (autocannon's CLI, or pgbench) is pinned to CPU ${r.pinned.load}; PostgreSQL (same host) is not pinned`
    : 'Nothing is pinned (no taskset on this machine): servers, load generator and PostgreSQL share every core';
  const block = [
    '<!-- rest-bench:start -->',
    '## REST reads (`npm run bench:rest`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}. Data: ${d.fills} fill legs, ${d.orders} orders, ${d.events} events, ${d.positions} positions, ${d.triggers} triggers, seeded by \`sandbox/seed\`${d.seedMs ? ` in ${Math.round(d.seedMs / 1000)} s` : ' (a kept schema, measured again)'}. ${placement}. ${r.connections} keep-alive connections, ${r.seconds} s per run; the four servers are measured alternately, ${r.rounds} rounds (A B C D A B C D …), figures are the means. **One-minute load average ${r.machine.load} when the run began, ${r.loadAtEnd} when it ended**: the machine's 2 cores are shared with other work, so absolute figures are depressed and the ratios are what to read.`,
    '',
    '| Read | Gateway req/s (p50 / p99) | Gateway, each read alone | Alone, nothing kept | 30-line peer | pgbench, the rows read whole: tps (p50 / p99) | Gateway ÷ peer | Alone ÷ peer | Nothing kept ÷ peer | CPU per request, alone / peer | Peer CPU ÷ alone CPU |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.comparisons.map(
      (c) =>
        `| ${c.name} | ${c.gateway.requestsPerSec} (${c.gateway.p50} / ${c.gateway.p99} ms) | ${c.alone.requestsPerSec} (${c.alone.p50} / ${c.alone.p99} ms) | ${c.bare.requestsPerSec} (${c.bare.p50} / ${c.bare.p99} ms) | ${c.peer.requestsPerSec} (${c.peer.p50} / ${c.peer.p99} ms) | ${c.pgbench ? `${c.pgbench.tps} (${c.pgbench.p50} / ${c.pgbench.p99} ms)` : '—'} | **${ratio(c.gateway.requestsPerSec, c.peer.requestsPerSec)}** | ${ratio(c.alone.requestsPerSec, c.peer.requestsPerSec)} | ${ratio(c.bare.requestsPerSec, c.peer.requestsPerSec)} | ${c.alone.cpuMs ?? '—'} / ${c.peer.cpuMs ?? '—'} ms | ${c.alone.cpuMs && c.peer.cpuMs ? ratio(c.peer.cpuMs, c.alone.cpuMs) : '—'} |`,
    ),
    '',
    'The gateway by default shares one database read among identical requests that arrive while one is in flight (never a read that started before they arrived; `LIST_SHARED_READS`); a benchmark that repeats one URL is where that helps most, so the "each read alone" column is the per-request cost: its own statements, every time. Fill, event and deposit rows are kept as written JSON by row version (key and `xmin`; `LIST_ROW_CACHE_BYTES`, docs/adr/0104-list-rows-kept-by-version.md): a page whose rows are all kept costs the database an index read of its keys and versions only, so on these reads "alone" is that statement and "nothing kept" the whole rows, each packed by PostgreSQL into one text column and the body written from its bytes (docs/adr/0102-list-rows-packed-into-one-column.md); orders, positions and triggers are read whole in both. The peer returns `limit + 1` rows decoded by postgres.js and serialised by `JSON.stringify`. The CPU columns are each server process\'s own CPU time (all threads, from /proc) divided by the requests it answered: what a read costs it whatever else the shared cores run, where req/s on an oversubscribed machine is bounded as much by waiting for a core as by that cost. pgbench runs the statement that reads the page\'s rows whole (the gateway\'s with nothing kept, captured from its query code, parameters inlined) from one C process with as many connections: the database\'s own ceiling for reading those rows on this machine, and its p99 the floor of a server that reads them (PostgreSQL alone, no HTTP); a gateway page written from kept rows asks the database less than that. Where the gateway\'s time goes: the profiles in docs/adr/0100-list-reads-written-from-raw-rows.md and 0102.',
    '',
    'Other reads, on the gateway only (default settings; no peer serves them):',
    '',
    '| Read | req/s | p50 | p99 | non-2xx |',
    '|---|---|---|---|---|',
    ...r.results.map((x) => `| ${x.name} | ${x.requestsPerSec || '—'} | ${x.p50} ms | ${x.p99} ms | ${x.non2xx} |`),
    '',
    'Database time of the uncached markets and candle statements, alone (median of 5):',
    '',
    '| Statement | ms | rows |',
    '|---|---|---|',
    ...r.queries.map((q) => `| ${q.name} | ${q.ms} | ${q.rows} |`),
    '',
    'The seed history is stamped to end at the time of the run, so the 24 h statistics cover a full day. The gateway answers identical markets and candle requests within a second from one database read, so the req/s of those rows is mostly that sharing: the statement table above is the cost of a first, uncached request. A status-filtered verification is chosen from the claim-status index (docs/adr/0101-verification-filters-from-a-claim-status-index.md): the first request after start builds it (the row marked so: one request, its time); later ones refresh it (the claim head, and the pending claims against the chain table alone) before choosing their page; a pending page is written from the index, a match or mismatch page read back (docs/adr/0103-verification-pages-from-the-claim-index.md). `BENCH_REST_ONLY=<path fragments>` measures only those reads (the docs are then left alone), `BENCH_CPU_PROF=<dir>` profiles every server. Rerun with `BENCH_REST_FILLS`, `BENCH_REST_SECONDS`, `BENCH_REST_CONNECTIONS`, `BENCH_REST_ROUNDS`.',
    '<!-- rest-bench:end -->',
  ].join('\n');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = text.indexOf('<!-- rest-bench:start -->');
  const end = text.indexOf('<!-- rest-bench:end -->');
  if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + '<!-- rest-bench:end -->'.length);
  else text = text.length === 0 ? `${block}\n` : `${text.replace(/\n*$/, '\n\n')}${block}\n`;
  writeDocsFile(file, text);
}

const ONLY = process.env.BENCH_REST_ONLY;
if (ONLY !== 'proof') await main();
if (ONLY === undefined || ONLY === 'proof') await proofBench(SERVER, SECONDS, CONNECTIONS);
