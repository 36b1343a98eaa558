// `npm run bench:fleet` — the fleet's figures for docs/performance.md (printed as markdown):
//   A. the reference engine's CPU per event with 0, 1, 4 and 8 direct SSE readers, and with one
//      relay publishing to JetStream (the engine then serves one reader whatever the fleet's size);
//   B. deliveries/s and event→client latency through nginx with 3 replicas against 1, all fed by
//      one relay through JetStream, at two offered loads.
// Needs nginx, and Redis/NATS as for the fleet tests (NATS_URL, default nats://127.0.0.1:4222).
// Processes: the engine (A) or a synthetic SSE source in this process (B), the relay, the
// replicas, nginx, and a client process (bench/stream-clients.ts) holding the WebSocket clients.
import { shortCheck, sized } from './short.js';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Agent, request } from 'undici';
import { connect as natsConnect } from 'nats';
import { REPLICA_KEEP_ALIVE_MS, startNginx } from '../deploy/nginx.js';
import { startScriptedEngine, type ScriptedEngine } from '../test/support/scripted-sse.js';
import type { ClientCmd, ClientReport } from './stream-shared.js';
import { freePort } from './processes.js';

const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const root = new URL('../', import.meta.url).pathname;
const TOKEN = 'bench-admin-token';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const TICK_S = 100; // USER_HZ

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / TICK_S; // utime + stime
}

// A process started with tsx on a loaded shared machine can take more than 30 s to listen.
async function until(check: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error(`${what}: timed out`);
    await sleep(100);
  }
}

/** Every process the bench started, killed if it stops on an error (they would outlive it). */
const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

function node(entry: string, env: Record<string, string>): ChildProcess {
  const p = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  started.add(p);
  return p;
}

async function stop(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(t);
}

/** nginx's workers (children of the master), whose CPU is the proxy's. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(f.slice(f.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function deleteStream(name: string): Promise<void> {
  const nc = await natsConnect({ servers: NATS_URL });
  await (await nc.jetstreamManager()).streams.delete(name).catch(() => undefined);
  await nc.close();
}

// ---------- A. engine CPU per event by SSE readers ----------
async function engineReaders(): Promise<string[]> {
  const port = await freePort();
  const engine = node('sandbox/engine/main.ts', { ENGINE_PORT: String(port), ENGINE_HOST: '127.0.0.1', ENGINE_ADMIN_TOKEN: TOKEN });
  const url = `http://127.0.0.1:${port}`;
  await until(async () => (await request(`${url}/healthz`)).statusCode === 200, 'engine');
  const agent = new Agent({ connections: 16 });
  const EVENTS = sized(3_000, 200);
  let party = 0;
  async function generate(n: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < n) {
          next++;
          const res = await request(`${url}/v1/admin/faucet`, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ party: `bench::${String(party++ % 1000).padStart(64, '0')}`, amount: '1' }),
          });
          await res.body.dump();
        }
      }),
    );
  }
  async function head(): Promise<number> {
    return ((await (await request(`${url}/healthz`)).body.json()) as { maxSeq: number }).maxSeq;
  }
  /** Direct readers: SSE connections that read and count (what a gateway's bridge asks of the engine). */
  function readers(n: number): { close(): void; got(): number } {
    const acs: AbortController[] = [];
    let got = 0;
    for (let i = 0; i < n; i++) {
      const ac = new AbortController();
      acs.push(ac);
      void request(`${url}/v1/admin/events/stream`, { signal: ac.signal, headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' }, bodyTimeout: 0 })
        .then(async (res) => {
          for await (const chunk of res.body) got += (chunk as Buffer).length;
        })
        .catch(() => undefined);
    }
    return { close: () => acs.forEach((a) => a.abort()), got: () => got };
  }
  await generate(sized(500, 50)); // warm-up
  const rows: Array<[string, number, number | null]> = [];
  const measure = async (label: string, extraPid: number | null, n: number) => {
    const r = readers(n);
    await sleep(sized(500, 200));
    const c0 = cpuMs(engine.pid!);
    const x0 = extraPid ? cpuMs(extraPid) : 0;
    await generate(EVENTS);
    await sleep(sized(700, 300)); // the writes to the readers finish
    shortCheck(`${label}: readers`, { 'read nothing': n === 0 || r.got() > 0 ? 0 : 1 });
    const perEvent = ((cpuMs(engine.pid!) - c0) * 1000) / EVENTS;
    const extra = extraPid ? ((cpuMs(extraPid) - x0) * 1000) / EVENTS : null;
    r.close();
    rows.push([label, perEvent, extra]);
  };
  for (const n of [0, 1, 4, 8]) await measure(`${n} direct SSE reader${n === 1 ? '' : 's'}`, null, n);
  const stream = `BENCH_${process.pid}`;
  const relayPort = await freePort();
  const relay = node('src/relay/main.ts', {
    PORT: String(relayPort),
    HOST: '127.0.0.1',
    ENGINE_BASE_URL: url,
    ENGINE_ADMIN_TOKEN: TOKEN,
    NATS_URL,
    NATS_STREAM: stream,
    NATS_SUBJECT: `bench.${process.pid}`,
  });
  await until(async () => (await request(`http://127.0.0.1:${relayPort}/readyz`)).statusCode === 200, 'relay');
  await measure('1 relay (→ JetStream, any number of replicas)', relay.pid!, 0);
  const h = await head();
  await until(async () => {
    const text = await (await request(`http://127.0.0.1:${relayPort}/metrics`)).body.text();
    // At least h: the engine ticks every second, so a lagging relay can pass h between two looks.
    return Number(/bff_relay_stream_last_seq (\d+)/.exec(text)?.[1]) >= h;
  }, 'relay caught up', 120_000);
  await stop(relay);
  await deleteStream(stream);
  await stop(engine);
  await agent.close();
  const base = rows[0]![1];
  return [
    '| Engine SSE readers | Engine CPU per event (µs) | Added by the readers (µs/event) | Relay CPU per event (µs) |',
    '|---|---|---|---|',
    ...rows.map(([label, per, extra]) => `| ${label} | ${per.toFixed(0)} | ${(per - base).toFixed(0)} | ${extra === null ? '–' : extra.toFixed(0)} |`),
  ];
}

// ---------- B. 3 replicas vs 1 through nginx ----------
function clientProcess(): Promise<{ send(cmd: ClientCmd): Promise<any>; proc: ChildProcess }> {
  const proc = fork(new URL('./stream-clients.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve) => {
    proc.once('message', () =>
      resolve({
        proc,
        send: (cmd) =>
          new Promise((r) => {
            proc.once('message', r);
            proc.send(cmd);
          }),
      }),
    );
  });
}

async function fleetRun(replicaCount: number, clients: number, rates: number[], seconds: number): Promise<string[]> {
  const source: ScriptedEngine = await startScriptedEngine({ token: TOKEN });
  const stream = `BENCHF_${process.pid}_${replicaCount}`;
  const nats = { NATS_URL, NATS_STREAM: stream, NATS_SUBJECT: `benchf.${process.pid}.${replicaCount}` };
  const relayPort = await freePort();
  const relay = node('src/relay/main.ts', { ...nats, PORT: String(relayPort), HOST: '127.0.0.1', ENGINE_BASE_URL: source.url, ENGINE_ADMIN_TOKEN: TOKEN });
  await until(async () => (await request(`http://127.0.0.1:${relayPort}/readyz`)).statusCode === 200, 'relay');
  let seq = 0;
  const tick = () => {
    seq++;
    return { seq, kind: 'engine.tick_start', ts: new Date().toISOString(), payload: { tick: seq } };
  };
  source.push(tick());
  const ports: number[] = [];
  const replicas: ChildProcess[] = [];
  for (let i = 0; i < replicaCount; i++) {
    const port = await freePort();
    ports.push(port);
    replicas.push(node('src/main.ts', { ...nats, PORT: String(port), HOST: '127.0.0.1', ENGINE_BASE_URL: source.url, ENGINE_ADMIN_TOKEN: TOKEN, WS_ORDERBOOK_POLL_MS: '3600000', WS_MAX_CONNECTIONS: '100000', WS_MAX_CONNECTIONS_PER_IP: '0', HTTP_MAX_CONNECTIONS_PER_IP: '0', HTTP_KEEP_ALIVE_TIMEOUT_MS: String(REPLICA_KEEP_ALIVE_MS) }));
  }
  for (const p of ports) await until(async () => (await request(`http://127.0.0.1:${p}/healthz`)).statusCode === 200, 'replica');
  const lbPort = await freePort();
  const nginx = await startNginx({ listen: `127.0.0.1:${lbPort}`, upstreams: ports.map((p) => `127.0.0.1:${p}`), workers: 1, maxConnectionsPerClient: 0, replicaKeepAliveMs: REPLICA_KEEP_ALIVE_MS });
  started.add(nginx.proc);
  const client = await clientProcess();
  await client.send({ cmd: 'connect', url: `ws://127.0.0.1:${lbPort}/v1/stream`, queries: ['kinds=engine.tick_start'], n: clients });
  const rows: string[] = [];
  for (const rate of rates) {
    await client.send({ cmd: 'reset' });
    const clientCpu0 = ((await client.send({ cmd: 'report' })) as ClientReport).cpuMs;
    const workers = childrenOf(nginx.proc.pid!);
    const pids = [...replicas.map((r) => r.pid!), relay.pid!, ...workers];
    const c0 = pids.map(cpuMs);
    const t0 = Date.now();
    // Paced by the clock (a late timer pushes what is due), and counted: the offered load is what was pushed.
    const seq0 = seq;
    while (Date.now() - t0 < seconds * 1000) {
      const due = Math.floor(((Date.now() - t0) / 1000) * rate) - (seq - seq0);
      if (due > 0) source.push(...Array.from({ length: due }, tick));
      await sleep(10);
    }
    const sent = seq - seq0;
    // Drain: wait until the clients stop receiving (queued frames still count, with their latency).
    let rep = (await client.send({ cmd: 'report' })) as ClientReport;
    for (let i = 0; i < 40; i++) {
      await sleep(sized(500, 200));
      const again = (await client.send({ cmd: 'report' })) as ClientReport;
      const still = again.received === rep.received;
      rep = again;
      if (still || rep.received >= sent * clients) break;
    }
    shortCheck(`${replicaCount} replica(s) at ${rate} events/s`, { 'nothing delivered': rep.received > 0 ? 0 : 1, 'clients not open': clients - rep.open });
    const c1 = pids.map(cpuMs);
    const elapsed = (rep.lastAt - rep.firstAt) / 1000 || seconds;
    const wall = (Date.now() - t0) / 1000;
    const cpu = (i: number) => (c1[i]! - c0[i]!) / 1000 / wall;
    const replicaCpu = replicas.reduce((s, _r, i) => s + cpu(i), 0);
    const nginxCpu = workers.reduce((s, _w, i) => s + cpu(replicaCount + 1 + i), 0);
    rows.push(
      `| ${replicaCount} | ${clients} | ${fmt(sent / seconds)} | ${fmt((sent * clients) / seconds)} | ${fmt(rep.received / elapsed)} | ${((100 * rep.received) / (sent * clients)).toFixed(1)} % | ${rep.latencyMs.p50} | ${rep.latencyMs.p99} | ${(replicaCpu * 100).toFixed(0)} % (${((replicaCpu * wall * 1e6) / Math.max(1, rep.received)).toFixed(1)} µs) | ${(nginxCpu * 100).toFixed(0)} % (${((nginxCpu * wall * 1e6) / Math.max(1, rep.received)).toFixed(1)} µs) | ${(cpu(replicaCount) * 100).toFixed(0)} % | ${((rep.cpuMs - clientCpu0) / 1000 / wall * 100).toFixed(0)} % | ${rep.open}/${clients} |`,
    );
  }
  await client.send({ cmd: 'closeAll' });
  client.proc.kill();
  await nginx.stop();
  for (const r of replicas) await stop(r);
  await stop(relay);
  await source.close();
  await deleteStream(stream);
  return rows;
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' / ');
// Each part is printed as soon as it is measured (a later failure keeps the earlier figures).
const out = { push: (...lines: string[]) => void process.stdout.write(`${lines.join('\n')}\n`) };
out.push(`Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:fleet\`: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, load average at start ${load()} (the machine is shared with other work).`);
if (process.env.BENCH_FLEET_PART !== 'B') {
  out.push('', '### Engine CPU per event: direct SSE readers against one relay', '');
  out.push(...(await engineReaders()));
}
const CLIENTS = Number(process.env.BENCH_FLEET_CLIENTS || sized('300', '20'));
const RATES = (process.env.BENCH_FLEET_RATES || sized('100,400', '50')).split(',').map(Number);
const SECONDS = Number(process.env.BENCH_FLEET_SECONDS || sized('8', '1'));
out.push('', `### Through nginx: 3 replicas against 1 (one relay, JetStream, ${CLIENTS} clients, \`kinds=engine.tick_start\`, ${SECONDS} s per load)`, '');
out.push('| Replicas | Clients | Events/s offered | Deliveries/s offered | Deliveries/s received | Delivered | p50 ms | p99 ms | Replicas CPU (per delivery) | nginx CPU (per delivery) | Relay CPU | Clients CPU | Open |', '|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const n of (process.env.BENCH_FLEET_REPLICAS || '1,3').split(',').map(Number)) out.push(...(await fleetRun(n, CLIENTS, RATES, SECONDS)));
out.push('', `Load average at the end: ${load()}.`);
process.exit(0);
