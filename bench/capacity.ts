// `npm run bench:capacity` — the capacity of one replica (docs/performance.md "Capacity of one
// replica"), the gateway against a plain `ws` server in the same run. For 5 000, 10 000 and as many
// clients as the gateway's file limit leaves room for (its stream connection limit, read from its
// /metrics), each server in a fresh process:
//   - memory per idle client: RSS and heap after a full GC, before connecting and after, and again
//     half-way through and at the end of BENCH_CAPACITY_IDLE_S of idling (two ping rounds by
//     default), so growth shows, and whether it stops; at the end, the marginal RSS per client
//     between the sizes (the per-run figure also holds what does not grow with the clients, such as
//     V8's young generation grown by the connection burst);
//   - trade-frame latency (event ts → client) at BENCH_CAPACITY_FILLS_PER_S fills for
//     BENCH_CAPACITY_SECONDS, every client taking `trade` frames only (the plain server sends only
//     those);
//   - at the limit (gateway): BENCH_CAPACITY_OVER more connections, which must be refused with 503
//     `too_many_connections`, while /healthz and /metrics are asked every 100 ms.
// Processes: this one (the synthetic engine, orchestration), the server (bench/stream-gateway.ts:
// the real app; or bench/stream-bare.ts), and BENCH_CAPACITY_PROCS client processes
// (bench/stream-clients.ts), each with its own file limit.
import { fork, type ChildProcess } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { request } from 'undici';
import { startSyntheticSource, type ServerReport } from './stream-shared.js';
import { stopWithBench } from './processes.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const env = (name: string, fallback: string) => process.env[name] || fallback;

const SIZES = env('BENCH_CAPACITY_CLIENTS', '5000,10000,max').split(',');
const PROCS = Number(env('BENCH_CAPACITY_PROCS', '4'));
const IDLE_S = Number(env('BENCH_CAPACITY_IDLE_S', '65'));
const FILLS_PER_S = Number(env('BENCH_CAPACITY_FILLS_PER_S', '2'));
const SECONDS = Number(env('BENCH_CAPACITY_SECONDS', '20'));
const OVER = Number(env('BENCH_CAPACITY_OVER', '500'));

const source = await startSyntheticSource();

function child(file: string, extra: Record<string, string> = {}): ChildProcess {
  return stopWithBench(
    fork(new URL(file, import.meta.url).pathname, [], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
      env: { ...process.env, BENCH_SOURCE_URL: source.url, ...extra },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
}

function ask<T>(p: ChildProcess, msg?: unknown): Promise<T> {
  return new Promise((resolve) => {
    p.once('message', (m) => resolve(m as T));
    if (msg !== undefined) p.send(msg as never);
  });
}

async function kill(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGKILL');
  await exited;
}

/** Fills at `perSecond` for `ms`, in 10 ms ticks paced by the clock. */
async function emitAtRate(perSecond: number, ms: number): Promise<number> {
  const t0 = Date.now();
  let sent = 0;
  while (Date.now() - t0 < ms) {
    const due = Math.floor(((Date.now() - t0) / 1000) * perSecond) - sent;
    if (due > 0) {
      source.emit(due);
      sent += due;
    }
    await sleep(10);
  }
  return sent;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function metric(base: string, name: string): Promise<number | null> {
  const text = await (await request(`${base}/metrics`)).body.text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

interface Row {
  server: 'gateway' | 'plain ws';
  asked: number;
  open: number;
  refused: Record<string, number>;
  before: ServerReport;
  idle: ServerReport;
  idleMid: ServerReport;
  idleLater: ServerReport;
  /** After the trade run (a full GC first). */
  traded: ServerReport;
  fills: number;
  received: number;
  p50: number;
  p99: number;
  max: number;
  cpuPct: number;
  over?: { refused: Record<string, number>; opened: number; probes: number; probeFailures: number; slowestProbeMs: number };
}

async function run(kind: Row['server'], asked: number | 'max'): Promise<Row> {
  const server = kind === 'gateway' ? child('./stream-gateway.ts') : child('./stream-bare.ts', { BENCH_BARE_KINDS: 'trade' });
  const { url } = await ask<{ url: string }>(server);
  const http = url.replace(/^ws/, 'http').replace(/\/v1\/stream$|\/$/, '');
  const clients: ChildProcess[] = [];
  try {
    await sleep(1_000); // connected to the source
    source.emit(10); // warm: the paths of a frame have run once
    await sleep(500);
    const limit = kind === 'gateway' ? await metric(http, 'bff_ws_connection_limit') : null;
    const n = asked === 'max' ? (limit ?? Number(env('BENCH_CAPACITY_MAX', '19000'))) : asked;
    for (let i = 0; i < PROCS; i++) clients.push(child('./stream-clients.ts'));
    await Promise.all(clients.map((c) => ask(c)));
    const before = await ask<ServerReport>(server, { cmd: 'report' });
    const share = (i: number) => Math.floor(n / PROCS) + (i < n % PROCS ? 1 : 0);
    const connected = await Promise.all(
      clients.map((c, i) => ask<{ open: number; refused: Record<string, number> }>(c, { cmd: 'connect', url, queries: ['kinds=trade'], n: share(i) })),
    );
    const refused: Record<string, number> = {};
    for (const c of connected) for (const [k, v] of Object.entries(c.refused)) refused[k] = (refused[k] ?? 0) + v;
    await sleep(5_000);
    const idle = await ask<ServerReport>(server, { cmd: 'report' });
    await sleep((IDLE_S * 1000) / 2);
    const idleMid = await ask<ServerReport>(server, { cmd: 'report' });
    await sleep((IDLE_S * 1000) / 2);
    const idleLater = await ask<ServerReport>(server, { cmd: 'report' });

    await Promise.all(clients.map((c) => ask(c, { cmd: 'reset' })));
    const cpu0 = await ask<ServerReport>(server, { cmd: 'report' });
    const t0 = Date.now();
    const fills = await emitAtRate(FILLS_PER_S, SECONDS * 1000);
    await sleep(2_000); // the last frames arrive
    const cpu1 = await ask<ServerReport>(server, { cmd: 'report' });
    const wall = Date.now() - t0;
    const samples = (await Promise.all(clients.map((c) => ask<number[]>(c, { cmd: 'samples' })))).flat().sort((a, b) => a - b);
    const reports = await Promise.all(clients.map((c) => ask<{ open: number; received: number }>(c, { cmd: 'report' })));
    const row: Row = {
      server: kind,
      asked: n,
      open: reports.reduce((s, r) => s + r.open, 0),
      refused,
      before,
      idle,
      idleMid,
      idleLater,
      traded: cpu1,
      fills,
      received: reports.reduce((s, r) => s + r.received, 0),
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      max: samples.at(-1) ?? 0,
      cpuPct: ((cpu1.cpuUserMs + cpu1.cpuSystemMs - cpu0.cpuUserMs - cpu0.cpuSystemMs) / wall) * 100,
    };
    if (kind === 'gateway' && asked === 'max') row.over = await overTheLimit(http, url, clients[0]!);
    return row;
  } finally {
    await Promise.all(clients.map(kill));
    await kill(server);
    await sleep(1_000);
  }
}

/** OVER more connections at the limit, while the probes are asked every 100 ms. */
async function overTheLimit(http: string, url: string, clients: ChildProcess): Promise<NonNullable<Row['over']>> {
  let probing = true;
  let probes = 0;
  let probeFailures = 0;
  let slowestProbeMs = 0;
  const probe = (async () => {
    while (probing) {
      for (const path of ['/healthz', '/metrics']) {
        const t = performance.now();
        probes++;
        try {
          const r = await request(`${http}${path}`, { headersTimeout: 5_000, bodyTimeout: 5_000 });
          await r.body.dump();
          if (r.statusCode !== 200) probeFailures++;
        } catch {
          probeFailures++;
        }
        slowestProbeMs = Math.max(slowestProbeMs, performance.now() - t);
      }
      await sleep(100);
    }
  })();
  const before = await ask<{ open: number; refused: Record<string, number> }>(clients, { cmd: 'report' });
  const r = await ask<{ open: number; refused: Record<string, number> }>(clients, { cmd: 'connect', url, queries: ['kinds=trade'], n: OVER });
  await sleep(1_000);
  probing = false;
  await probe;
  return { refused: r.refused, opened: r.open - before.open, probes, probeFailures, slowestProbeMs };
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' / ');
const out = (...lines: string[]) => void process.stdout.write(`${lines.join('\n')}\n`);
out(
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench:capacity\`: ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${PROCS} client processes, ${FILLS_PER_S} fills/s for ${SECONDS} s per run, ` +
    `idle ${IDLE_S} s; load average at start ${load()} (the machine is shared with other work).`,
  '',
  '| Server | Clients asked | Open | Refused | RSS idle | RSS per idle client | Heap per idle client | RSS growth idle, 1st / 2nd ' + IDLE_S / 2 + ' s | Heap growth idle | Growth over the trade run (RSS, heap) | Trade frames received / expected | p50 ms | p99 ms | max ms | Server CPU | p99 ÷ plain |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
);
const overLines: string[] = [];
const idleRss: Record<Row['server'], Array<[number, number]>> = { gateway: [], 'plain ws': [] };
for (const size of SIZES) {
  const asked = size === 'max' ? 'max' : Number(size);
  const g = await run('gateway', asked);
  const p = await run('plain ws', g.asked);
  for (const r of [g, p]) {
    idleRss[r.server].push([r.open, r.idle.rss]);
    const perRss = (r.idle.rss - r.before.rss) / r.open;
    const perHeap = (r.idle.heapUsed - r.before.heapUsed) / r.open;
    const refused = Object.entries(r.refused).map(([k, v]) => `${v} × ${k}`).join(', ') || '0';
    out(
      `| ${r.server} | ${fmt(r.asked)}${size === 'max' ? ' (the limit)' : ''} | ${fmt(r.open)} | ${refused} | ${mb(r.idle.rss)} | ${kb(perRss)} KB | ${kb(perHeap)} KB | ` +
        `${mb(r.idleMid.rss - r.idle.rss)} / ${mb(r.idleLater.rss - r.idleMid.rss)} | ${mb(r.idleLater.heapUsed - r.idle.heapUsed)} | ${mb(r.traded.rss - r.idleLater.rss)}, ${mb(r.traded.heapUsed - r.idleLater.heapUsed)} | ` +
        `${fmt(r.received)} / ${fmt(r.fills * r.open)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.cpuPct.toFixed(0)} % | ${r === g ? (g.p99 / Math.max(1, p.p99)).toFixed(2) : '1'} |`,
    );
  }
  if (g.over) {
    const o = g.over;
    overLines.push(
      `At the limit (${fmt(g.asked)} open), ${fmt(OVER)} more connections: ${Object.entries(o.refused).map(([k, v]) => `${v} refused with ${k}`).join(', ') || 'none refused'}, ` +
        `${o.opened} opened; /healthz and /metrics meanwhile: ${o.probes} asked, ${o.probeFailures} failed, slowest ${o.slowestProbeMs.toFixed(0)} ms.`,
    );
  }
}
const marginal = (points: Array<[number, number]>) =>
  points
    .slice(1)
    .map(([n, rss], i) => `${fmt(points[i]![0])} → ${fmt(n)}: ${kb((rss - points[i]![1]) / (n - points[i]![0]))} KB`)
    .join(', ');
out(
  '',
  ...(SIZES.length > 1 ? [`Marginal RSS per idle client between sizes: gateway ${marginal(idleRss.gateway)}; plain ws ${marginal(idleRss['plain ws'])}.`, ''] : []),
  ...overLines,
  '',
  `Load average at the end: ${load()}.`,
);
source.close();
process.exit(0);
