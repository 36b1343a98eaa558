// Part of `npm run bench:stream`: order book frames, engine event → client, at 1 000 clients.
// The reference engine runs here (orders placed straight into its core at a steady rate, every
// emitted seq timed), the real gateway in a child (bench/stream-gateway.ts, polling the engine's
// book every 500 ms as by default), 1 000 WebSocket clients in another (bench/stream-book-clients.ts).
// Two phases on the same order flow: 1 000 delta clients (kinds=orderbook.delta, depth 20), then
// 1 000 clients of the spec's polled orderbook.snapshot. Per phase: p50/p99/max of engine emit of a
// book event → the first frame a client receives that shows it (watched: the first and the last
// connection of the fan-out), frames and bytes per second per client.
// Pinned by default (as an operator runs a server, not sharing its core with its 1 000 clients, and
// as bench:rest pins its servers): the server under test, the gateway and the floor alike, on cpu 1
// (started through `taskset`: every thread of it), the engine (this process) and both client processes on cpu 0.
// BENCH_BOOK_PIN=0, or a machine without taskset or with one core: nothing pinned, all share both.
// Results go between the book-bench markers of docs/performance.md.
import { shortCheck, sized } from './short.js';
import { writeDocsFile } from './docs-block.js';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { startEngine } from '../sandbox/engine/index.js';
import { hasTaskset } from './processes.js';

// `npm run bench:stream -- --pipeline-only` measures only stream.ts's single-core pipeline: nothing here.
if (process.argv.includes('--pipeline-only')) {
  console.log('book bench skipped (--pipeline-only)');
  process.exit(0);
}

const CLIENTS = Number(process.env.BENCH_BOOK_CLIENTS ?? sized(1000, 50));
const SECONDS = Number(process.env.BENCH_BOOK_SECONDS ?? sized(10, 1));
const ORDERS_PER_S = 100;
/** CPU of the server under test, CPU of the engine and the clients; null: nothing pinned. */
const PIN = process.env.BENCH_BOOK_PIN !== '0' && cpus().length >= 2 && hasTaskset() ? { server: '1', rest: '0' } : null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ask<T>(child: ChildProcess, message: object): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(message);
  });
}

function waitMessage<T>(child: ChildProcess, test: (m: T) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: unknown): void => {
      if (test(m as T)) {
        child.off('message', on);
        resolve(m as T);
      }
    };
    child.on('message', on);
  });
}

/** A Node child (tsx) with IPC, started on `cpu` (through taskset, so every thread it makes is pinned). */
function start(entry: string, cpu: string | undefined, env: NodeJS.ProcessEnv, execArgv: string[] = []): ChildProcess {
  const node = ['--import', 'tsx', ...execArgv];
  const url = new URL(entry, import.meta.url);
  return cpu === undefined
    ? fork(url, [], { execArgv: node, env })
    : fork(url, [], { execPath: 'taskset', execArgv: ['-c', cpu, process.execPath, ...node], env });
}

// This process (the engine and the order flow), every thread of it.
if (PIN) execFileSync('taskset', ['-a', '-p', '-c', PIN.rest, String(process.pid)], { stdio: 'ignore' });
const loadAtStart = loadavg();
const engine = await startEngine({ port: 0, tickMs: 0, commitMs: 0, adminToken: 'bench' });
const core = engine.engine;
const emitted = new Map<number, number>();
// Events that change the BTC-PERP book, with the time the engine emitted them.
core.log.subscribe((e) => {
  if (e.market === 'BTC-PERP' && (e.kind === 'engine.order_placed' || e.kind === 'engine.order_filled' || e.kind === 'engine.order_cancelled')) {
    emitted.set(e.seq, performance.timeOrigin + performance.now());
  }
});
const parties = Array.from({ length: 6 }, (_, i) => `bench${i}::${(i + 1).toString(16).padStart(64, '0')}`);
for (const p of parties) core.deposit({ party: p, amount: '100000000' }, 'faucet');

// BENCH_CPU_PROF=<dir>: the gateway writes a V8 CPU profile there on exit.
const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
const gateway = start('./stream-gateway.ts', PIN?.server, { ...process.env, BENCH_SOURCE_URL: engine.url, BENCH_ADMIN_TOKEN: 'bench', BENCH_POLL_MS: '500' }, profile);
const { url } = await waitMessage<{ url?: string }>(gateway, (m) => typeof m.url === 'string') as { url: string };
const floor = start('./stream-book-floor.ts', PIN?.server, { ...process.env, BENCH_SOURCE_URL: engine.url, BENCH_BOOK_MARKET: 'BTC-PERP' });
const { url: floorUrl } = await waitMessage<{ url?: string }>(floor, (m) => typeof m.url === 'string') as { url: string };
const startClients = async (): Promise<ChildProcess> => {
  const child = start('./stream-book-clients.ts', PIN?.rest, process.env);
  await waitMessage<{ ready?: boolean }>(child, (m) => m.ready === true);
  return child;
};
const load = await startClients();
const probe = await startClients();

// A market maker around a wandering mid, and takers crossing it: every order changes the book.
let mid = 65000;
let n = 0;
const resting: Array<[string, string]> = [];
function order(): void {
  n++;
  const party = parties[n % parties.length]!;
  mid += (Math.random() - 0.5) * 10;
  const px = (off: number) => String(Math.round((mid + off) / 5) * 5);
  if (n % 5 === 0) core.placeOrder(party, { market: 'BTC-PERP', side: n % 10 === 0 ? 'buy' : 'sell', type: 'market', size: '0.010' });
  else if (n % 7 === 0 && resting.length > 0) {
    const [p, id] = resting.splice(Math.floor(Math.random() * resting.length), 1)[0]!;
    core.cancelOrder(p, id);
  } else {
    const side = n % 2 === 0 ? 'buy' : 'sell';
    const r = core.placeOrder(party, { market: 'BTC-PERP', side, type: 'limit', size: '0.020', price: px((side === 'buy' ? -1 : 1) * 5 * (1 + (n % 15))) });
    if (r.ok && r.status === 'open') resting.push([party, r.orderId]);
  }
}

interface Report { bytes: number; frames: number; samples: Array<Array<[number, number]>>; seconds: number; open: number }

/**
 * For every book event emitted in the phase: the time until a watched client first received a
 * frame as of that seq or later (a delta of it, or the next polled snapshot). Events no frame
 * ever showed (a polled book that changed back before the next poll) are left out.
 */
function latencies(samples: Array<[number, number]>, from: number, to: number): number[] {
  const out: number[] = [];
  let i = 0;
  for (const [seq, at] of [...emitted].filter(([, t]) => t >= from && t <= to).sort((a, b) => a[0] - b[0])) {
    while (i < samples.length && samples[i]![0] < seq) i++;
    if (i < samples.length && samples[i]![1] >= at) out.push(samples[i]![1] - at);
  }
  return out;
}

async function phase(target: string): Promise<{ p50: number; p99: number; max: number; framesPerClientS: number; bytesPerClientS: number; open: number; samples: number }> {
  // Fan-out order is connection order: the probe's first socket is written to first, its second last.
  const first = await ask<{ open: number }>(probe, { cmd: 'connect', url: target, n: 1, watch: true });
  const middle = await ask<{ open: number }>(load, { cmd: 'connect', url: target, n: CLIENTS - 2, watch: false });
  const last = await ask<{ open: number }>(probe, { cmd: 'connect', url: target, n: 1, watch: true });
  void first;
  const open = middle.open + last.open;
  await sleep(1500); // the views' snapshots delivered, the book seeded
  await Promise.all([ask(load, { cmd: 'reset' }), ask(probe, { cmd: 'reset' })]);
  const from = performance.timeOrigin + performance.now();
  const interval = setInterval(() => {
    for (let i = 0; i < ORDERS_PER_S / 20; i++) order();
  }, 50);
  await sleep(SECONDS * 1000);
  clearInterval(interval);
  const to = performance.timeOrigin + performance.now();
  await sleep(700); // the last poll
  const [rl, rp] = await Promise.all([ask<Report>(load, { cmd: 'report' }), ask<Report>(probe, { cmd: 'report' })]);
  await Promise.all([ask(load, { cmd: 'closeAll' }), ask(probe, { cmd: 'closeAll' })]);
  const lat = rp.samples.flatMap((s) => latencies(s, from, to)).sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? 0;
  shortCheck(`book frames, ${target}`, { 'timed frames': lat.length > 0 ? 0 : 1, 'clients not connected': CLIENTS - open });
  return {
    p50: pct(50),
    p99: pct(99),
    max: lat.at(-1) ?? 0,
    framesPerClientS: (rl.frames + rp.frames) / open / rl.seconds,
    bytesPerClientS: (rl.bytes + rp.bytes) / open / rl.seconds,
    open,
    samples: lat.length,
  };
}

const delta = await phase(`${url}?kinds=orderbook.delta&markets=BTC-PERP&depth=20`);
const polled = await phase(`${url}?kinds=orderbook.snapshot&markets=BTC-PERP`);
const bare = await phase(floorUrl);
gateway.send({ cmd: 'exit' });
floor.send({ cmd: 'exit' });
load.kill();
probe.kill();
await engine.close();

const f1 = (x: number) => x.toFixed(1);
const where = PIN
  ? `${cpus().length} cores, pinned (\`taskset\`): the server under test (the gateway, and the floor alike) alone on cpu ${PIN.server}, as an operator runs a server; the engine and the two client processes on cpu ${PIN.rest} (BENCH_BOOK_PIN=0: nothing pinned)`
  : `${cpus().length} cores shared by the engine, the server under test and the two client processes (not pinned${process.env.BENCH_BOOK_PIN === '0' ? ': BENCH_BOOK_PIN=0' : ': no taskset or one core'})`;
const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
const rows = [
  `Measured by \`npm run bench:stream\` (book part, bench/stream-book.ts) on ${new Date().toISOString().slice(0, 10)}: ${where}; node ${process.version}; loopback; load average at start ${loadAtStart.map((x) => x.toFixed(1)).join(' / ')}. ${ORDERS_PER_S} orders/s on one market for ${SECONDS} s, ${CLIENTS} clients per phase: ${CLIENTS - 2} held by a load process, the first and the last of the fan-out by a probe process that times them (so a time is when that socket got the frame, as a screen holding one socket sees it). Compare the rows (same run, same order flow); the floor is the least any server can do.`,
  '',
  `| Book frames to ${CLIENTS.toLocaleString('en-US')} clients | engine emit → client p50 | p99 | max | frames/s per client | bytes/s per client |`,
  '|---|---|---|---|---|---|',
  `| \`orderbook.delta\` (kept from events, depth 20) | ${f1(delta.p50)} ms | ${f1(delta.p99)} ms | ${f1(delta.max)} ms | ${f1(delta.framesPerClientS)} | ${fmt(delta.bytesPerClientS)} |`,
  `| \`orderbook.snapshot\` (polled every 500 ms, depth 20) | ${f1(polled.p50)} ms | ${f1(polled.p99)} ms | ${f1(polled.max)} ms | ${f1(polled.framesPerClientS)} | ${fmt(polled.bytesPerClientS)} |`,
  `| floor: each book event's own text, framed once, written to every socket (bench/stream-book-floor.ts) | ${f1(bare.p50)} ms | ${f1(bare.p99)} ms | ${f1(bare.max)} ms | ${f1(bare.framesPerClientS)} | ${fmt(bare.bytesPerClientS)} |`,
  '',
  `Latency ratio polled / delta at p99: ${f1(polled.p99 / Math.max(0.1, delta.p99))}×; bytes per client delta / polled: ${(delta.bytesPerClientS / Math.max(1, polled.bytesPerClientS)).toFixed(2)} (a delta per view per delivered batch of engine events: a busier book sends more frames, each only its changed levels). Delta p99 over the floor's: ${f1(delta.p99 - bare.p99)} ms (${f1(delta.p99 / Math.max(0.1, bare.p99))}×). Target: delta p99 < 10 ms at 1 000 clients.`,
].join('\n');
console.log(rows);
console.log(JSON.stringify({ delta, polled, floor: bare }));
const DOC = new URL('../docs/performance.md', import.meta.url);
if (existsSync(DOC)) {
  const doc = readFileSync(DOC, 'utf8');
  const START = '<!-- book-bench:start -->';
  const END = '<!-- book-bench:end -->';
  const block = `${START}\n${rows}\n${END}`;
  writeDocsFile(DOC, doc.includes(START) ? doc.replace(new RegExp(`${START}[\\s\\S]*?${END}`), block) : `${doc.trimEnd()}\n\n## Order book frames (\`npm run bench:stream\`, book part)\n\n${block}\n`);
}
process.exit(0);
