/**
 * What traces cost (`npm run bench:tracing`): bench:proxy and bench:rest, each run with traces off
 * (no OTEL_* variable: the SDK is not loaded) and on at 100 % sampling (OTEL_TRACES_SAMPLER=always_on,
 * OTLP/HTTP protobuf to a sink process on loopback that reads and drops every export), alternated
 * off, on, off, on so a drift of the shared machine's load hits both alike. Each run's own
 * peer stays in the figures (bench:proxy's direct-to-engine side), so the comparison is of ratios
 * and of the gateway's CPU per call, not of absolute rates. Writes the block between the
 * tracing-bench markers of docs/performance.md.
 *
 * Settings: BENCH_TRACING_ROUNDS (default 2), and the two benches' own (defaults here are short:
 * BENCH_PROXY_ORDERS 4000, BENCH_PROXY_READS 6000, BENCH_PROXY_PROBE 500, BENCH_REST_FILLS 50000,
 * BENCH_REST_SECONDS 1).
 */
import { SHORT as SHORT_RUN, shortCheck, shortFigure, sized } from './short.js';
import { writeDocsFile } from './docs-block.js';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './processes.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? sized(2, 1));
/** The proxy and REST benches sized for a tracing round (a short run keeps their own short sizes). */
// A short run keeps their short sizes and measures a few of the REST reads (one of each kind: a
// party's, a verification filter, a market, candles) on the gateway alone: the REST rows of this
// bench are those reads, not the list comparisons against the peer, which bench:rest runs itself.
const CHILD_SIZES = SHORT_RUN ? { BENCH_REST_ONLY: 'balance,status=pending,/v1/markets/BTC-PERP,interval=1h' } : {
  BENCH_PROXY_ORDERS: '4000',
  BENCH_PROXY_READS: '6000',
  BENCH_PROXY_PROBE: '500',
  BENCH_REST_FILLS: '50000',
  BENCH_REST_SECONDS: '1',
  BENCH_PROXY_WAIT_S: '10',
};

/** An OTLP/HTTP receiver that accepts and drops every export: a collector that costs the gateway nothing more. */
const SINK = `
const http = require('node:http');
let spans = 0, bytes = 0;
http.createServer((req, res) => { req.on('data', (c) => (bytes += c.length)); req.on('end', () => { spans++; res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); }); })
  .listen(Number(process.argv[1]), '127.0.0.1');
process.on('SIGTERM', () => { process.stdout.write(JSON.stringify({ exports: spans, bytes })); process.exit(0); });
`;

function run(script: string, env: Record<string, string>): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script)], {
      cwd: ROOT,
      env: { ...CHILD_SIZES, ...process.env, BENCH_NO_DOCS: '1', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      // The report is the JSON object printed from a line `{` to a line `}`; bench/rest.ts prints its
      // proof bench's markdown after it.
      const start = out.search(/^\{$/m);
      const end = out.indexOf('\n}', start);
      if (code !== 0 || start < 0 || end < 0) reject(new Error(`${script} exited ${code}`));
      else resolve(JSON.parse(out.slice(start, end + 2)));
    });
  });
}

async function main(): Promise<void> {
  const load = () => Number(loadavg()[0]!.toFixed(2));
  const loadAtStart = load();
  const sinkPort = await freePort();
  const sink = spawn(process.execPath, ['-e', SINK, String(sinkPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let sinkOut = '';
  sink.stdout.on('data', (d: Buffer) => (sinkOut += d.toString()));
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'bench-gateway' };
  const proxy: Array<{ tracing: boolean; r: any }> = [];
  const rest: Array<{ tracing: boolean; r: any }> = [];
  let keptSchema: string | null = null;
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const tracing of [false, true]) {
        console.error(`[bench:tracing] round ${i + 1}, proxy, tracing ${tracing ? 'on' : 'off'} (load ${load()})`);
        proxy.push({ tracing, r: await run('bench/proxy.ts', tracing ? on : {}) });
        console.error(`[bench:tracing] round ${i + 1}, rest, tracing ${tracing ? 'on' : 'off'} (load ${load()})`);
        const reuse: Record<string, string> = keptSchema ? { BENCH_REST_SCHEMA: keptSchema } : { BENCH_KEEP: '1' };
        const r = await run('bench/rest.ts', { ...(tracing ? on : {}), ...reuse });
        keptSchema ??= r.schema;
        rest.push({ tracing, r });
      }
    }
  } finally {
    sink.kill('SIGTERM');
    await new Promise((r) => sink.once('exit', r));
    if (keptSchema) {
      const { default: postgres } = await import('postgres');
      const admin = postgres(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} });
      await admin.unsafe(`DROP SCHEMA ${keptSchema} CASCADE`).catch(() => {});
      await admin.end({ timeout: 5 });
    }
  }
  const sinkTotals = sinkOut ? (JSON.parse(sinkOut) as { exports: number; bytes: number }) : { exports: 0, bytes: 0 };
  const report = summarize(proxy, rest, { loadAtStart, loadAtEnd: load(), sink: sinkTotals });
  shortCheck('the OTLP sink', { 'no export received': sinkTotals.exports > 0 ? 0 : 1 });
  for (const side of ['off', 'on'] as const) {
    for (const call of ['orders', 'bookAlone'] as const) shortFigure(`proxy ${call}, tracing ${side}`, report.proxy[side][call].throughputRatio);
  }
  shortCheck('REST reads', { 'none measured': report.rest.rows.length > 0 ? 0 : 1 });
  for (const row of report.rest.rows) shortCheck(`REST ${row.name} on / off`, { 'not computed': row.ratio > 0 && Number.isFinite(row.ratio) ? 0 : 1 });
  console.log(JSON.stringify(report, null, 2));
  writeDocs(report);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const r2 = (x: number) => Math.round(x * 100) / 100;

function summarize(proxy: Array<{ tracing: boolean; r: any }>, rest: Array<{ tracing: boolean; r: any }>, run: { loadAtStart: number; loadAtEnd: number; sink: { exports: number; bytes: number } }) {
  const pinned = (r: any) => r.results.find((x: any) => x.placement.name === 'pinned') ?? r.results[0];
  const side = (tracing: boolean) => {
    const runs = proxy.filter((p) => p.tracing === tracing).map((p) => pinned(p.r));
    const calls = (key: 'orders' | 'orderbookAlone') => ({
      throughputRatio: r2(mean(runs.map((x) => x[key].throughputRatio))),
      gatewayCpuUs: Math.round(mean(runs.map((x) => x[key].gateway.cpuUsPerReq.gateway ?? 0))),
      addedP50Ms: r2(mean(runs.map((x) => x[key].addedP50Ms))),
      gatewayP99Ms: r2(mean(runs.map((x) => x[key].gateway.p99))),
    });
    return { orders: calls('orders'), bookAlone: calls('orderbookAlone') };
  };
  const restSide = (tracing: boolean) => {
    const runs = rest.filter((p) => p.tracing === tracing).map((p) => p.r);
    const byName = new Map<string, number[]>();
    for (const r of runs) for (const x of r.results) byName.set(x.name, [...(byName.get(x.name) ?? []), x.requestsPerSec]);
    return new Map([...byName].map(([k, v]) => [k, mean(v)]));
  };
  const restOff = restSide(false);
  const restOn = restSide(true);
  const restRows = [...restOff.keys()].map((name) => ({ name, off: Math.round(restOff.get(name)!), on: Math.round(restOn.get(name) ?? 0), ratio: r2((restOn.get(name) ?? 0) / restOff.get(name)!) }));
  return {
    machine: { cpus: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, ...run },
    rounds: ROUNDS,
    proxy: { off: side(false), on: side(true) },
    rest: { rows: restRows, medianRatio: r2([...restRows.map((r) => r.ratio)].sort((a, b) => a - b)[Math.floor(restRows.length / 2)] ?? 0) },
    restData: rest[0]?.r.data,
  };
}

function writeDocs(r: ReturnType<typeof summarize>): void {
  const file = join(ROOT, 'docs/performance.md');
  const p = r.proxy;
  const proxyRow = (call: string, off: any, on: any) =>
    `| ${call} | ${Math.round(off.throughputRatio * 100)} % | ${Math.round(on.throughputRatio * 100)} % | ${off.gatewayCpuUs} µs | ${on.gatewayCpuUs} µs (${on.gatewayCpuUs - off.gatewayCpuUs >= 0 ? '+' : ''}${on.gatewayCpuUs - off.gatewayCpuUs}) | ${off.addedP50Ms} / ${on.addedP50Ms} ms |`;
  const block = [
    '<!-- tracing-bench:start -->',
    '## What traces cost (`npm run bench:tracing`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}; 1-minute load average ${r.machine.loadAtStart} at the start and ${r.machine.loadAtEnd} at the end (the machine was shared with other engineers' work, so absolute figures are depressed and swing; read the ratios). \`bench:proxy\` and \`bench:rest\` (short settings) each ran ${r.rounds} × off and ${r.rounds} × on, alternated. **Off**: no OTEL_* variable (the SDK is not loaded). **On**: \`OTEL_TRACES_SAMPLER=always_on\` (every request sampled, 100 %), OTLP/HTTP protobuf with the SDK's batch processor to a sink process on loopback that read ${r.machine.sink.exports} exports (${Math.round(r.machine.sink.bytes / 1024)} KiB) and dropped them.`,
    '',
    'Trading proxy (pinned placement, mean of the runs; "kept" is the gateway\'s throughput over the engine\'s direct throughput measured in the same run):',
    '',
    '| Call | Throughput kept, off | Throughput kept, on | Gateway CPU / call, off | Gateway CPU / call, on | Added p50 (serial), off / on |',
    '|---|---|---|---|---|---|',
    proxyRow('`POST /v1/orders` (request span + engine span)', p.off.orders, p.on.orders),
    proxyRow('`GET /v1/orderbook?depth=20`, forwarded alone (request span + engine span)', p.off.bookAlone, p.on.bookAlone),
    '',
    `REST reads over ${r.restData?.fills ?? '?'} seeded fill legs (request span + database span): requests/s with traces on over off, per read, median ${Math.round(r.rest.medianRatio * 100)} %:`,
    '',
    '| Read | Off (req/s) | On (req/s) | On / off |',
    '|---|---|---|---|',
    ...r.rest.rows.map((x) => `| ${x.name} | ${x.off} | ${x.on} | ${Math.round(x.ratio * 100)} % |`),
    '',
    'Off costs nothing measurable by construction: without OTEL_* variables no OpenTelemetry SDK module is loaded (test/e2e/tracing/otlp-export.test.ts checks it) and each traced call site is one null check. On at 100 % sampling the cost is the CPU per call above; sample less (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, `OTEL_TRACES_SAMPLER_ARG=0.1`) where it matters.',
    '<!-- tracing-bench:end -->',
  ].join('\n');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = text.indexOf('<!-- tracing-bench:start -->');
  const end = text.indexOf('<!-- tracing-bench:end -->');
  if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + '<!-- tracing-bench:end -->'.length);
  else text = `${text.replace(/\n*$/, '\n\n')}${block}\n`;
  writeDocsFile(file, text);
}

await main();
