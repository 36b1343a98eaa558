// `npm run bench:capacity` — the capacity of one replica (docs/performance.md "Capacity of one
// replica"), the gateway against a plain `ws` server in the same run. For 5 000, 10 000 and as many
// clients as the gateway's file limit leaves room for (its stream connection limit, read from its
// /metrics), both servers in fresh processes, side by side, each with its own synthetic engine and
// its own client processes:
//   - memory per idle client: RSS and heap after a full GC, before connecting and after, and again
//     half-way through and at the end of BENCH_CAPACITY_IDLE_S of idling (two ping rounds by
//     default), so growth shows, and whether it stops; at the end, the marginal RSS per client
//     between the sizes (the per-run figure also holds what does not grow with the clients, such as
//     V8's young generation grown by the connection burst);
//   - trade-frame latency (event ts → client) in BENCH_CAPACITY_ROUNDS rounds: in each, one server
//     then the other (the order alternating from round to round) gets BENCH_CAPACITY_FILLS_PER_S
//     fills for BENCH_CAPACITY_SECONDS, every client taking `trade` frames only (the plain server
//     sends only those); p99 and the ratio per round, and their medians. On a shared machine the
//     load moves by the minute: rounds of seconds, taken in turn, let it hit both servers alike;
//   - at the limit (gateway): BENCH_CAPACITY_OVER more connections, which must be refused with 503
//     `too_many_connections`, while /healthz and /metrics are asked every 100 ms.
// Processes: this one (the synthetic engines, orchestration), the servers (bench/stream-gateway.ts:
// the real app; bench/stream-bare.ts), and BENCH_CAPACITY_PROCS client processes per server
// (bench/stream-clients.ts), each with its own file limit. BENCH_CAPACITY_PROF=<dir>: the gateway
// writes a V8 CPU profile there when its size is done.
import { shortCheck, sized } from './short.js';
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

const SIZES = env('BENCH_CAPACITY_CLIENTS', sized('5000,10000,max', '200')).split(',');
const PROCS = Number(env('BENCH_CAPACITY_PROCS', sized('4', '1')));
const IDLE_S = Number(env('BENCH_CAPACITY_IDLE_S', sized('65', '1')));
const FILLS_PER_S = Number(env('BENCH_CAPACITY_FILLS_PER_S', '2'));
const SECONDS = Number(env('BENCH_CAPACITY_SECONDS', sized('10', '1')));
const ROUNDS = Number(env('BENCH_CAPACITY_ROUNDS', sized('6', '1')));
const OVER = Number(env('BENCH_CAPACITY_OVER', '500'));
const PROF = process.env.BENCH_CAPACITY_PROF;

type Source = Awaited<ReturnType<typeof startSyntheticSource>>;
type Kind = 'gateway' | 'plain ws';

function child(file: string, source: Source | null, extra: Record<string, string> = {}, flags: string[] = []): ChildProcess {
  return stopWithBench(
    fork(new URL(file, import.meta.url).pathname, [], {
      execArgv: ['--import', 'tsx', '--expose-gc', ...flags],
      env: { ...process.env, ...(source ? { BENCH_SOURCE_URL: source.url } : {}), ...extra },
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

async function kill(p: ChildProcess, graceful = false): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  // A clean exit lets `node --cpu-prof` write its profile.
  if (graceful) p.send({ cmd: 'exit' });
  else p.kill('SIGKILL');
  await exited;
}

/** Fills at `perSecond` for `ms`, in 10 ms ticks paced by the clock. */
async function emitAtRate(source: Source, perSecond: number, ms: number): Promise<number> {
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

const median = (xs: number[]): number => percentile(xs.slice().sort((a, b) => a - b), 50);

async function metric(base: string, name: string): Promise<number | null> {
  const text = await (await request(`${base}/metrics`)).body.text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

interface Round {
  fills: number;
  expected: number;
  received: number;
  p50: number;
  p99: number;
  max: number;
  cpuPct: number;
}

/** One server with its engine and clients, from its start to its idle measurements. */
interface Side {
  kind: Kind;
  source: Source;
  server: ChildProcess;
  clients: ChildProcess[];
  url: string;
  http: string;
  asked: number;
  open: number;
  refused: Record<string, number>;
  before: ServerReport;
  idle?: ServerReport;
  idleMid?: ServerReport;
  idleLater?: ServerReport;
  rounds: Round[];
  over?: { refused: Record<string, number>; opened: number; probes: number; probeFailures: number; slowestProbeMs: number };
}

/** Starts a server and its clients and connects `asked` (the gateway's limit for 'max'). */
async function start(kind: Kind, asked: number | 'max'): Promise<Side> {
  const source = await startSyntheticSource();
  const flags = kind === 'gateway' && PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [];
  const server = kind === 'gateway' ? child('./stream-gateway.ts', source, {}, flags) : child('./stream-bare.ts', source, { BENCH_BARE_KINDS: 'trade' });
  const { url } = await ask<{ url: string }>(server);
  const http = url.replace(/^ws/, 'http').replace(/\/v1\/stream$|\/$/, '');
  await sleep(sized(1_000, 500)); // connected to the source
  source.emit(10); // warm: the paths of a frame have run once
  await sleep(sized(500, 200));
  const limit = kind === 'gateway' ? await metric(http, 'bff_ws_connection_limit') : null;
  const n = asked === 'max' ? (limit ?? Number(env('BENCH_CAPACITY_MAX', '19000'))) : asked;
  const clients: ChildProcess[] = [];
  for (let i = 0; i < PROCS; i++) clients.push(child('./stream-clients.ts', null));
  await Promise.all(clients.map((c) => ask(c)));
  const before = await ask<ServerReport>(server, { cmd: 'report' });
  const share = (i: number) => Math.floor(n / PROCS) + (i < n % PROCS ? 1 : 0);
  const connected = await Promise.all(
    clients.map((c, i) => ask<{ open: number; refused: Record<string, number> }>(c, { cmd: 'connect', url, queries: ['kinds=trade'], n: share(i) })),
  );
  const refused: Record<string, number> = {};
  for (const c of connected) for (const [k, v] of Object.entries(c.refused)) refused[k] = (refused[k] ?? 0) + v;
  shortCheck(`${kind}, ${n} clients`, { 'not opened': n - connected.reduce((s, c) => s + c.open, 0) });
  return { kind, source, server, clients, url, http, asked: n, open: connected.reduce((s, c) => s + c.open, 0), refused, before, rounds: [] };
}

/** One latency round of `side`: fills for SECONDS, then every sample its clients took. */
async function round(side: Side): Promise<Round> {
  await Promise.all(side.clients.map((c) => ask(c, { cmd: 'reset' })));
  const cpu0 = await ask<ServerReport>(side.server, { cmd: 'report' });
  const t0 = Date.now();
  const fills = await emitAtRate(side.source, FILLS_PER_S, SECONDS * 1000);
  await sleep(sized(2_000, 500)); // the last frames arrive
  const cpu1 = await ask<ServerReport>(side.server, { cmd: 'report' });
  const wall = Date.now() - t0;
  const samples = (await Promise.all(side.clients.map((c) => ask<number[]>(c, { cmd: 'samples' })))).flat().sort((a, b) => a - b);
  const reports = await Promise.all(side.clients.map((c) => ask<{ open: number; received: number }>(c, { cmd: 'report' })));
  shortCheck(`${side.kind}, latency round`, { 'no frame received': reports.reduce((s, r) => s + r.received, 0) > 0 ? 0 : 1, 'no latency sample': samples.length > 0 ? 0 : 1 });
  return {
    fills,
    expected: fills * reports.reduce((s, r) => s + r.open, 0),
    received: reports.reduce((s, r) => s + r.received, 0),
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.at(-1) ?? 0,
    cpuPct: ((cpu1.cpuUserMs + cpu1.cpuSystemMs - cpu0.cpuUserMs - cpu0.cpuSystemMs) / wall) * 100,
  };
}

async function stopSide(side: Side): Promise<void> {
  await Promise.all(side.clients.map((c) => kill(c)));
  await kill(side.server, side.kind === 'gateway' && PROF !== undefined);
  side.source.close();
}

/** OVER more connections at the limit, while the probes are asked every 100 ms. */
async function overTheLimit(http: string, url: string, clients: ChildProcess): Promise<NonNullable<Side['over']>> {
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

/** One size: both servers up side by side, idle together, then the latency rounds in turn. */
async function size(asked: number | 'max'): Promise<[Side, Side]> {
  const g = await start('gateway', asked);
  let p: Side | null = null;
  try {
    p = await start('plain ws', g.asked);
    const sides = [g, p];
    const reports = () => Promise.all(sides.map((s) => ask<ServerReport>(s.server, { cmd: 'report' })));
    await sleep(sized(5_000, 500));
    [g.idle, p.idle] = await reports();
    await sleep((IDLE_S * 1000) / 2);
    [g.idleMid, p.idleMid] = await reports();
    await sleep((IDLE_S * 1000) / 2);
    [g.idleLater, p.idleLater] = await reports();
    for (let i = 0; i < ROUNDS; i++) for (const s of i % 2 === 0 ? [g, p] : [p, g]) s.rounds.push(await round(s));
    if (asked === 'max') g.over = await overTheLimit(g.http, g.url, g.clients[0]!);
    return [g, p];
  } finally {
    if (p) await stopSide(p);
    await stopSide(g);
    await sleep(sized(1_000, 100));
  }
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' / ');
const out = (...lines: string[]) => void process.stdout.write(`${lines.join('\n')}\n`);
out(
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npm run bench:capacity\`: ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${PROCS} client processes per server, idle ${IDLE_S} s, ` +
    `${ROUNDS} latency rounds of ${FILLS_PER_S} fills/s for ${SECONDS} s per server, in turn; load average at start ${load()} (the machine is shared with other work).`,
  '',
  '| Server | Clients asked | Open | Refused | RSS idle | RSS per idle client | Heap per idle client | RSS growth idle, 1st / 2nd ' + IDLE_S / 2 + ' s | Heap growth idle | Trade frames received / expected | p50 ms (median of rounds) | p99 ms (median of rounds) | max ms | Server CPU (median) | p99 ÷ plain (median of rounds) |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
);
const overLines: string[] = [];
const roundLines: string[] = [];
const idleRss: Record<Kind, Array<[number, number]>> = { gateway: [], 'plain ws': [] };
for (const sz of SIZES) {
  const asked = sz === 'max' ? 'max' : Number(sz);
  const [g, p] = await size(asked);
  const ratios = g.rounds.map((r, i) => r.p99 / Math.max(1, p.rounds[i]!.p99));
  for (const s of [g, p]) {
    const idle = s.idle!;
    idleRss[s.kind].push([s.open, idle.rss]);
    const perRss = (idle.rss - s.before.rss) / s.open;
    const perHeap = (idle.heapUsed - s.before.heapUsed) / s.open;
    const refused = Object.entries(s.refused).map(([k, v]) => `${v} × ${k}`).join(', ') || '0';
    const sum = (f: (r: Round) => number) => s.rounds.reduce((a, r) => a + f(r), 0);
    out(
      `| ${s.kind} | ${fmt(s.asked)}${sz === 'max' ? ' (the limit)' : ''} | ${fmt(s.open)} | ${refused} | ${mb(idle.rss)} | ${kb(perRss)} KB | ${kb(perHeap)} KB | ` +
        `${mb(s.idleMid!.rss - idle.rss)} / ${mb(s.idleLater!.rss - s.idleMid!.rss)} | ${mb(s.idleLater!.heapUsed - idle.heapUsed)} | ` +
        `${fmt(sum((r) => r.received))} / ${fmt(sum((r) => r.expected))} | ${median(s.rounds.map((r) => r.p50))} | ${median(s.rounds.map((r) => r.p99))} | ` +
        `${Math.max(...s.rounds.map((r) => r.max))} | ${median(s.rounds.map((r) => r.cpuPct)).toFixed(0)} % | ${s === g ? `**${median(ratios).toFixed(2)}**` : '1'} |`,
    );
  }
  roundLines.push(
    `${fmt(g.open)} clients, p99 per round (gateway / plain ws ms = ratio; the first server of a round alternates, gateway first in odd rounds): ` +
      g.rounds.map((r, i) => `${r.p99} / ${p.rounds[i]!.p99} = ${ratios[i]!.toFixed(2)}`).join('; ') +
      `; ${ratios.filter((x) => x <= 1.2).length} of ${ratios.length} rounds ≤ 1.2.`,
  );
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
  ...roundLines,
  '',
  ...(SIZES.length > 1 ? [`Marginal RSS per idle client between sizes: gateway ${marginal(idleRss.gateway)}; plain ws ${marginal(idleRss['plain ws'])}.`, ''] : []),
  ...overLines,
  '',
  `Load average at the end: ${load()}.`,
);
process.exit(0);
