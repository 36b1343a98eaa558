/**
 * What one user's attack costs the others (`npm run bench:isolation`; docs/performance.md
 * "Isolation"). The reference engine and the gateway run as separate processes (no database, no
 * Redis: replay memory, budgets and switches in process memory, as one replica), with the default
 * rate limits except a party budget as large as the address's, so one party can spend its whole
 * address's budget. A victim on 127.0.0.1 places orders (one every VICTIM_EVERY_MS, REST, each
 * matched by the next) and keeps a deflate socket it pings; each attacker is on its own loopback
 * address (127.0.0.2, .3, …: budgets of its own). For each attack, in the same run: a window of
 * the victim alone (baseline), then a window of the victim under the attack, each bounded in time,
 * and the attack's own calls bounded in count:
 *
 *   engine-pool burst   its address's whole budget at once as batches of 50 cancels of unknown
 *                       orders from an unfunded party (RATE_LIMIT_IP_MAX / 5 batches);
 *   deflate bomb        100 deflate sockets sending small compressed messages that inflate to
 *                       250 KB each, reconnecting when closed;
 *   heartbeat flood     50 sockets, each arming a switch of 200 cancels, then heartbeats at the
 *                       socket's message rate (~1 000/s in all);
 *   deflate connections 300 deflate connections opened (each sends a compressed message), then
 *                       closed, three times: the gateway's RSS per connection and after each round.
 *
 * Reported per attack: the victim's order p50/p99/max and errors, its pong p50/p99/max, and the
 * gateway's RSS. `--short` (or BENCH_SHORT=1): small windows and attacks, finishes in seconds and
 * exits 1 on any error of the victim (any non-200, any missing pong); no docs are written.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { constants as zlibConstants, deflateRawSync } from 'node:zlib';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { writeDocsBlock } from './docs-block.js';
import { freePort, procCpuMs, procUsage, stop, stopWithBench, waitHealthy } from './processes.js';
import { requestMessage, type Session } from '../packages/client/src/index.js';
import { agents, deflateSocket, http, PING_EVERY_MS, q, r1, sessionFor, sleep, VICTIM_EVERY_MS, type Sample } from './isolation-shared.js';
import type { VictimMessage } from './isolation-victim.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHORT = process.argv.includes('--short') || process.env.BENCH_SHORT === '1';
const TOKEN = 'bench-isolation-token';
const WINDOW_MS = Number(process.env.BENCH_ISOLATION_WINDOW_MS ?? (SHORT ? 2_000 : 8_000));
const IP_MAX = 1_200;
const BURST_BATCHES = SHORT ? 20 : IP_MAX / 5;
const BOMB_SOCKETS = SHORT ? 10 : 100;
const HEARTBEAT_SOCKETS = SHORT ? 5 : 50;
const SWITCH_CANCELS = SHORT ? 20 : 200;
const DEFLATE_CONNECTIONS = SHORT ? 30 : 300;
const DEFLATE_ROUNDS = SHORT ? 1 : 3;
/** BENCH_ISOLATION_ONLY=engine,deflate bomb: only the attacks whose names start so (nothing written to the docs). */
const ONLY = process.env.BENCH_ISOLATION_ONLY ? process.env.BENCH_ISOLATION_ONLY.split(',').map((s) => s.trim()) : null;
/** BENCH_ISOLATION_PROF=dir: the gateway writes a V8 CPU profile there when it stops (--cpu-prof). */
const PROF_DIR = process.env.BENCH_ISOLATION_PROF;

function spawnTs(script: string, env: Record<string, string>, flags: string[] = []): ChildProcess {
  return stopWithBench(spawn(process.execPath, [...flags, '--import', 'tsx', join(ROOT, script)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] }));
}

/**
 * A client's compressed text message as one masked WebSocket frame (RSV1 set: permessage-deflate,
 * the deflate stream's trailing 00 00 ff ff removed), built once and written as is on every send.
 */
function bombFrame(text: string): Buffer {
  const full = deflateRawSync(Buffer.from(text), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
  const payload = full.subarray(0, full.length - 4);
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  const len = payload.length;
  const header = len < 126 ? Buffer.from([0xc1, 0x80 | len]) : Buffer.from([0xc1, 0x80 | 126, len >> 8, len & 0xff]);
  return Buffer.concat([header, mask, masked]);
}

/** The victim's own process (bench/isolation-victim.ts): its windows are not delayed by the attacks' load on this one. */
function spawnVictim(env: Record<string, string>): ChildProcess {
  return stopWithBench(spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/isolation-victim.ts')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
}

/** Asks the victim for a window of `ms` (null: waits for it to be ready); its Sample. */
function victimWindows(child: ChildProcess): (ms: number | null) => Promise<Sample> {
  return (ms) =>
    new Promise((resolve, reject) => {
      const onMessage = (m: VictimMessage) => {
        if ('failed' in m) reject(new Error(`victim: ${m.failed}`));
        else if (ms === null && 'ready' in m) resolve({ orders: [], errors: [], pongs: [], pongsMissing: 0 });
        else if (ms !== null && 'sample' in m) resolve(m.sample);
        else return;
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      const onExit = () => reject(new Error('victim: exited'));
      child.on('message', onMessage);
      child.once('exit', onExit);
      if (ms !== null) child.send({ window: ms });
    });
}

interface AttackResult {
  name: string;
  detail: string;
  baseline: Sample;
  attacked: Sample;
  rssMiB: { before: number; during: number; after: number };
  /** CPU time of the gateway and the engine during the window alone and the attacked one. */
  cpuMs: { gateway: [number, number]; engine: [number, number] };
}

async function main(): Promise<void> {
  const enginePort = await freePort();
  const gatewayPort = await freePort();
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const wsUrl = `ws://127.0.0.1:${gatewayPort}/v1/stream`;
  const engine = spawnTs('sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_ADMIN_TOKEN: TOKEN, ENGINE_TICK_MS: '1000', ENGINE_COMMIT_MS: '5000' });
  const gateway = spawnTs('src/main.ts', {
    PORT: String(gatewayPort),
    HOST: '0.0.0.0',
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: TOKEN,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'error',
    RATE_LIMIT_IP_MAX: String(IP_MAX),
    RATE_LIMIT_MAX: String(IP_MAX),
  }, PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []);
  const rss = () => r1((procUsage(gateway.pid)?.rss ?? 0) / 1_048_576);
  const cpuOf = () => ({ gateway: procCpuMs(gateway.pid) ?? 0, engine: procCpuMs(engine.pid) ?? 0 });
  let victimProcess: ChildProcess | null = null;
  const results: AttackResult[] = [];
  const sockets: WebSocket[] = [];
  try {
    // Up to two minutes each: on a loaded machine compiling and starting them takes that long.
    await waitHealthy(engineUrl);
    await waitHealthy(gatewayUrl);
    victimProcess = spawnVictim({ ISOLATION_GATEWAY_URL: gatewayUrl, ISOLATION_ENGINE_URL: engineUrl, ISOLATION_TOKEN: TOKEN });
    const victimWindow = victimWindows(victimProcess);
    await victimWindow(null);

    const addDetail = (name: string, text: string) => {
      const r = results.find((x) => x.name === name);
      if (r) r.detail += text;
    };
    // BENCH_ISOLATION_METRICS=1: where the victim's time went, from the gateway's histograms (counts per bucket in each window).
    const metricLines = async (): Promise<Map<string, number>> => {
      const out = new Map<string, number>();
      if (!process.env.BENCH_ISOLATION_METRICS) return out;
      const text = (await http('127.0.0.1', `${gatewayUrl}/metrics`, 'GET', {})).json as string;
      for (const line of String(text).split('\n')) {
        if (/^(bff_engine_proxy_duration_seconds_bucket\{[^}]*route="POST \/v1\/orders"|bff_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/orders"[^}]*method="POST"|bff_http_request_duration_seconds_bucket\{[^}]*method="POST"[^}]*route="\/v1\/orders"|nodejs_eventloop_lag_max)/.test(line)) {
          const i = line.lastIndexOf(' ');
          out.set(line.slice(0, i), Number(line.slice(i + 1)));
        }
      }
      return out;
    };
    const metricDiff = (label: string, a: Map<string, number>, b: Map<string, number>) => {
      if (!process.env.BENCH_ISOLATION_METRICS) return;
      console.log(`-- ${label}`);
      for (const [k, v] of b) if (k.startsWith('nodejs') || v - (a.get(k) ?? 0) > 0) console.log(`   ${k} ${k.startsWith('nodejs') ? v : v - (a.get(k) ?? 0)}`);
    };
    const measure = async (name: string, detail: string, attack: (stop: () => boolean) => Promise<void>, after?: () => Promise<void>) => {
      if (ONLY && !ONLY.some((o) => name.startsWith(o))) return;
      const cpu0 = cpuOf();
      const m0 = await metricLines();
      const baseline = await victimWindow(WINDOW_MS);
      const m1 = await metricLines();
      metricDiff(`${name}: alone`, m0, m1);
      const cpu1 = cpuOf();
      const before = rss();
      let stopped = false;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss())), 250);
      const running = attack(() => stopped);
      const attacked = await victimWindow(WINDOW_MS);
      const cpu2 = cpuOf();
      metricDiff(`${name}: attacked`, m1, await metricLines());
      stopped = true;
      await running;
      await after?.();
      clearInterval(sampler);
      results.push({
        name,
        detail,
        baseline,
        attacked,
        rssMiB: { before, during: peak, after: rss() },
        cpuMs: { gateway: [cpu1.gateway - cpu0.gateway, cpu2.gateway - cpu1.gateway], engine: [cpu1.engine - cpu0.engine, cpu2.engine - cpu1.engine] },
      });
      report(results.at(-1)!);
    };

    // 1. The engine pool: the address's whole budget at once as batches of 50 cancels of unknown orders.
    const attacker = await sessionFor(gatewayUrl, 'isolation-unfunded');
    const batches: string[] = [];
    for (let b = 0; b < BURST_BATCHES; b++) {
      const items = [];
      for (let i = 0; i < 50; i++) {
        const orderId = `nope-${b}-${i}`;
        const ts = await attacker.nextTs();
        items.push({ op: 'cancel', orderId, sig: `${ts}.${await attacker.signature(requestMessage('DELETE', `/v1/orders/${orderId}`, ts, ''))}` });
      }
      batches.push(JSON.stringify({ user: attacker.party, sessionId: attacker.sessionId, items }));
    }
    const burstOutcomes = new Map<string, number>();
    await measure('engine-pool burst', `${BURST_BATCHES} batches of 50 cancels of unknown orders at once (${BURST_BATCHES * 50} engine calls), unfunded party, 127.0.0.2`, async () => {
      await Promise.all(
        batches.map((body) =>
          http('127.0.0.2', `${gatewayUrl}/v1/orders/batch`, 'POST', { 'content-type': 'application/json' }, body).then(
            (r) => {
              const results = (r.json?.results ?? []) as Array<{ status: number | null; body: { code?: string; reason?: string } | null }>;
              const whole = `batch ${r.status} ${r.json?.code ?? ''}${r.json?.budget ? ` (${r.json.budget})` : ''}`;
              if (results.length === 0) burstOutcomes.set(whole, (burstOutcomes.get(whole) ?? 0) + 1);
              for (const x of results) {
                const k = `${x.status} ${x.body?.code ?? x.body?.reason ?? ''}`;
                burstOutcomes.set(k, (burstOutcomes.get(k) ?? 0) + 1);
              }
            },
            () => burstOutcomes.set('transport error', (burstOutcomes.get('transport error') ?? 0) + 1),
          ),
        ),
      );
    });
    addDetail('engine-pool burst', `; its items: ${[...burstOutcomes].map(([k, n]) => `${n} × ${k}`).join(', ')}`);

    // 2. The deflate bomb: small compressed messages inflating to 250 KB, on many sockets, reconnecting.
    const bomb = bombFrame(JSON.stringify({ op: 'subscribe', id: 'b', pad: ' '.repeat(250_000) }));
    let bombsSent = 0;
    let bombCloses = 0;
    await measure('deflate bomb', `${BOMB_SOCKETS} deflate sockets from 127.0.0.3, messages of ${bomb.length} bytes inflating to 250 KB, 20/s each, reconnecting when closed`, async (stopped) => {
      await Promise.all(
        Array.from({ length: BOMB_SOCKETS }, async () => {
          while (!stopped()) {
            let ws: WebSocket;
            try {
              ws = await deflateSocket(wsUrl, '127.0.0.3');
            } catch {
              await sleep(50);
              continue;
            }
            const closed = new Promise<void>((r) => ws.once('close', () => r()));
            let open = true;
            void closed.then(() => ((open = false), bombCloses++));
            const raw = (ws as unknown as { _socket: Socket })._socket;
            while (open && !stopped()) {
              // The frame built once: compressing 250 KB per send would load this process, where the
              // victim measures, not the gateway.
              raw.write(bomb);
              bombsSent++;
              await sleep(50);
            }
            ws.terminate();
          }
        }),
      );
    });
    addDetail('deflate bomb', `; ${bombsSent} bombs sent, ${bombCloses} sockets closed by the gateway`);

    // 3. Heartbeat flood: switches of many cancels, heartbeats at the socket's message rate.
    // Made a few at a time: from one address, at most TRADING_ADDRESS_IN_PROGRESS requests are taken at once.
    const hbParties: Session[] = [];
    for (let i = 0; i < HEARTBEAT_SOCKETS; i += 10) hbParties.push(...(await Promise.all(Array.from({ length: Math.min(10, HEARTBEAT_SOCKETS - i) }, (_, j) => sessionFor(gatewayUrl, `isolation-hb-${i + j}`)))));
    let heartbeats = 0;
    const hbAnswers = new Map<string, number>();
    await measure('heartbeat flood', `${HEARTBEAT_SOCKETS} sockets from 127.0.0.4, each a switch of ${SWITCH_CANCELS} cancels, heartbeats at 20/s per socket`, async (stopped) => {
      await Promise.all(
        hbParties.map(async (s) => {
          const ts = await s.nextTs();
          const proof = `${ts}.${await s.signature(requestMessage('GET', '/v1/stream', ts, ''))}`;
          const url = `${wsUrl}?party=${encodeURIComponent(s.party)}&user=${encodeURIComponent(s.party)}&sessionId=${encodeURIComponent(s.sessionId)}&sig=${proof}&kinds=order.update`;
          const ws = new WebSocket(url, { localAddress: '127.0.0.4', perMessageDeflate: false });
          sockets.push(ws);
          ws.on('message', (data) => {
            const m = JSON.parse(data.toString()) as { kind?: string; payload?: { code?: string } };
            if (m.kind === 'stream.error') hbAnswers.set(m.payload?.code ?? '?', (hbAnswers.get(m.payload?.code ?? '?') ?? 0) + 1);
          });
          await new Promise<void>((resolve, reject) => {
            ws.once('open', () => resolve());
            ws.once('error', reject);
          });
          const ahead = Date.now() + 20_000;
          const cancels = [];
          for (let i = 0; i < SWITCH_CANCELS; i++) {
            const orderId = `hb-${i}`;
            cancels.push({ orderId, sig: `${ahead + i}.${await s.signature(requestMessage('DELETE', `/v1/orders/${orderId}`, ahead + i, ''))}` });
          }
          ws.send(JSON.stringify({ op: 'switch.arm', id: 'arm', party: s.party, sessionId: s.sessionId, timeoutMs: 15_000, cancels }));
          while (!stopped() && ws.readyState === WebSocket.OPEN) {
            ws.send(JSON.stringify({ op: 'switch.heartbeat', id: 'hb', party: s.party }));
            heartbeats++;
            await sleep(50);
          }
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ op: 'switch.disarm', id: 'off', party: s.party }));
          await sleep(100);
          ws.terminate();
        }),
      );
    });
    addDetail('heartbeat flood', `; ${heartbeats} heartbeats sent${hbAnswers.size ? `, errors: ${[...hbAnswers].map(([k, n]) => `${n} × ${k}`).join(', ')}` : ''}`);

    // 4. Many deflate connections, opened and closed in rounds: RSS per connection, and what stays.
    const rounds: string[] = [];
    await measure(
      'deflate connections',
      `${DEFLATE_CONNECTIONS} deflate connections from 127.0.0.5–.7, each sending one compressed message, then closed; ${DEFLATE_ROUNDS} rounds`,
      async () => {
        // Every round runs (bounded in count), past the victim's window if need be.
        for (let round = 0; round < DEFLATE_ROUNDS; round++) {
          const before = rss();
          const refusals = new Map<string, number>();
          const tried = await Promise.all(
            Array.from({ length: DEFLATE_CONNECTIONS }, async (_, i) => {
              try {
                const ws = await deflateSocket(wsUrl, `127.0.0.${5 + (i % 3)}`);
                ws.send(JSON.stringify({ op: 'subscribe', id: `c${i}`, kinds: ['trade'], pad: 'x'.repeat(2_000) }));
                return ws;
              } catch (err) {
                // A refused upgrade (WS_DEFLATE_CONNECTIONS_PER_IP: 429 budget_exhausted) is counted, not fatal.
                const key = /(\d{3})/.exec((err as Error).message)?.[1] ?? 'error';
                refusals.set(key, (refusals.get(key) ?? 0) + 1);
                return null;
              }
            }),
          );
          const open = tried.filter((ws): ws is WebSocket => ws !== null);
          await sleep(500);
          const held = rss();
          await Promise.all(open.map((ws) => new Promise<void>((r) => (ws.once('close', () => r()), ws.close()))));
          await sleep(500);
          const refused = [...refusals].map(([k, n]) => `${n} refused ${k}`).join(', ');
          rounds.push(`round ${round + 1}: ${open.length} open${refused ? ` (${refused})` : ''}, ${before} → ${held} MiB open (${open.length ? r1(((held - before) * 1024) / open.length) : 0} KiB each) → ${rss()} MiB closed`);
        }
      },
    );
    addDetail('deflate connections', `; ${rounds.join('; ')}`);
  } finally {
    for (const ws of sockets) ws.terminate();
    for (const a of agents.values()) a.destroy();
    await Promise.all([stop(gateway), stop(engine), ...(victimProcess ? [stop(victimProcess)] : [])]);
  }

  const failures = results.flatMap((r) => [...r.baseline.errors, ...r.attacked.errors, ...(r.baseline.pongsMissing + r.attacked.pongsMissing > 0 ? ['pong missing'] : [])].map((e) => `${r.name}: ${e}`));
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  const lines = [
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load average ${load} (1, 5, 15 min) at the end of the run; windows of ${WINDOW_MS / 1000} s, victim order every ${VICTIM_EVERY_MS} ms, ping every ${PING_EVERY_MS} ms.`,
    '',
    '| Attack | Victim order p50 / p99 / max, ms (alone → attacked) | Victim errors | Victim pong p50 / p99 / max, ms (alone → attacked) | Gateway RSS MiB (before / peak / after) | CPU ms in the window, gateway / engine (alone → attacked) |',
    '|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${fmt(r.baseline.orders)} → ${fmt(r.attacked.orders)} | ${r.baseline.errors.length} → ${r.attacked.errors.length} | ${fmt(r.baseline.pongs)} → ${fmt(r.attacked.pongs)}${r.attacked.pongsMissing ? ` (${r.attacked.pongsMissing} missing)` : ''} | ${r.rssMiB.before} / ${r.rssMiB.during} / ${r.rssMiB.after} | ${r.cpuMs.gateway[0]} / ${r.cpuMs.engine[0]} → ${r.cpuMs.gateway[1]} / ${r.cpuMs.engine[1]} |`,
    ),
    '',
    ...results.map((r) => `- ${r.name}: ${r.detail}.`),
    '',
  ];
  console.log(lines.join('\n'));
  if (!SHORT && !ONLY) writeDocsBlock('isolation-bench', lines);
  if (failures.length > 0) {
    console.error(`bench:isolation: ${failures.length} victim errors:\n${[...new Set(failures)].join('\n')}`);
    process.exit(1);
  }
}

function fmt(xs: number[]): string {
  return `${r1(q(xs, 0.5))} / ${r1(q(xs, 0.99))} / ${r1(Math.max(...xs))}`;
}

function report(r: AttackResult): void {
  console.log(`${r.name}: orders ${fmt(r.baseline.orders)} → ${fmt(r.attacked.orders)} ms, errors ${r.baseline.errors.length} → ${r.attacked.errors.length}, pongs ${fmt(r.baseline.pongs)} → ${fmt(r.attacked.pongs)} ms, RSS ${r.rssMiB.before}/${r.rssMiB.during}/${r.rssMiB.after} MiB, CPU ms gateway/engine ${r.cpuMs.gateway[0]}/${r.cpuMs.engine[0]} → ${r.cpuMs.gateway[1]}/${r.cpuMs.engine[1]}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
