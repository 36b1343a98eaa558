/**
 * A victim's reads while one address attacks the stream (`npm run bench:budgets`; issue 29,
 * docs/security.md "Work a message triggers").
 *
 * Starts the reference engine and two gateways as processes, on a seeded schema of the shared
 * PostgreSQL, with authentication on: one gateway with the default work budgets
 * (SESSION_LOOKUPS_PER_IP, SNAPSHOT_READS_PER_IP), one with them out of reach (the peer: what the
 * gateway did before). On each gateway, in turn, a victim reads sequentially from this process
 * (`GET /v1/fills?limit=50`, a database read, and its own signed `GET /v1/users/:party/orders`, an
 * engine read) for PHASE_S seconds: alone (the baseline), then while an attacker process on the same
 * machine runs one of the attacks of the issue:
 *   - proofs: subscribe messages proving a party with a session id nobody made (each a session
 *     store lookup), from 100 sockets (WS_MAX_CONNECTIONS_PER_IP) at 18 messages a second each (under
 *     WS_CLIENT_MESSAGES_PER_S): 1 800 proofs a second;
 *   - snapshots: 50 sockets each holding 50 proven parties, each socket subscribing to `order.update`
 *     and `fill` with a snapshot at 15 messages a second (under the message rate).
 * Reports each read's p50/p99 and the ratio of p99 under attack to the baseline p99, with what the
 * attacker got answered; writes the block between the budgets-bench markers of docs/performance.md.
 */
import { shortCheck, sized } from './short.js';
import { writeDocsFile } from './docs-block.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { Pool, request } from 'undici';
import WebSocket from 'ws';
import { migrate } from '../schema/migrate.js';
import { seed } from '../sandbox/seed/index.js';
import { freePort, stop, waitHealthy } from './processes.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TOKEN = 'bench-admin-token';
const PHASE_S = Number(process.env.BENCH_BUDGETS_PHASE_S ?? sized(10, 1));
const DATABASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The snapshot attacker's sockets and parties (a short run: 5 and 5; proving 50 parties on each socket took 3.5 s). */
const SOCKETS = sized(50, 5);
const PARTIES = sized(50, 5);

interface Party {
  id: string;
  priv: KeyObject;
  session: { hex: string; priv: KeyObject };
  sessionId: string;
  lastTs: number;
}

function keyPair(): { hex: string; priv: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { hex: der.subarray(der.length - 32).toString('hex'), priv: privateKey };
}
const signHex = (k: KeyObject, m: string): string => sign(null, Buffer.from(m), k).toString('hex');

async function json(url: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const r = await request(url, { method: method as 'GET', body: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  return r.body.json();
}

/** A party with a session made through `base` (the engine or a gateway). */
async function newParty(base: string, hint: string): Promise<Party> {
  const key = keyPair();
  const session = keyPair();
  const id = `${hint}::${key.hex}`;
  const expiresAt = Date.now() + 3_600_000;
  const signature = signHex(key.priv, `session-auth\n${id}\n${session.hex}\n${expiresAt}`);
  const r = await json(`${base}/v1/session-auth`, 'POST', { party: id, sessionPublicKey: session.hex, expiresAt, signature });
  if (!r.ok) throw new Error(`session-auth: ${JSON.stringify(r)}`);
  return { id, priv: key.priv, session, sessionId: r.sessionId, lastTs: 0 };
}

function nextTs(p: Party): number {
  const now = Date.now();
  p.lastTs = now > p.lastTs ? now : p.lastTs + 1;
  return p.lastTs;
}

function streamProof(p: Party): { user: string; sessionId: string; sig: string } {
  const ts = nextTs(p);
  return { user: p.id, sessionId: p.sessionId, sig: `${ts}.${signHex(p.session.priv, `GET\n/v1/stream\n${ts}\n`)}` };
}

function spawnTs(script: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, script), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

// ---------------------------------------------------------------------------------------------
// The attacker (a process of its own: `work-budgets.ts attack <mode> <gateway> <engine> <seconds>`).

async function attack(mode: string, gateway: string, engine: string, seconds: number): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  const count = (code: string) => (codes[code] = (codes[code] ?? 0) + 1);
  const until = Date.now() + seconds * 1000;
  const pace = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const open = (n: number) =>
    Promise.all(
      Array.from(
        { length: n },
        () =>
          new Promise<WebSocket>((resolve, reject) => {
            const ws = new WebSocket(`${gateway.replace(/^http/, 'ws')}/v1/stream?kinds=trade`);
            ws.on('message', (d) => {
              const m = JSON.parse(d.toString()) as { kind: string; payload?: { code?: string } };
              if (m.kind === 'stream.ack') count('ack');
              else if (m.kind === 'stream.error') count(m.payload?.code ?? 'error');
            });
            ws.once('open', () => resolve(ws));
            ws.once('error', reject);
          }),
      ),
    );
  if (mode === 'proofs') {
    // 100 sockets (WS_MAX_CONNECTIONS_PER_IP), each at 18 subscribes a second (under WS_CLIENT_MESSAGES_PER_S),
    // each proving a party with a session id nobody made.
    const sockets = await open(100);
    const party = `mallory::${'a'.repeat(64)}`;
    await Promise.all(
      sockets.map(async (ws) => {
        let i = 0;
        while (Date.now() < until && ws.readyState === WebSocket.OPEN) {
          const proof = { user: party, sessionId: `s-${randomBytes(8).toString('hex')}`, sig: `${Date.now()}.${randomBytes(64).toString('hex')}` };
          ws.send(JSON.stringify({ op: 'subscribe', id: i++, party: [party], ...proof }));
          await pace(1000 / 18);
        }
      }),
    );
    for (const ws of sockets) ws.close();
    return codes;
  }
  // snapshots: 50 parties with sessions made through the gateway (which learns them from the answer).
  const parties = await Promise.all(Array.from({ length: PARTIES }, (_, i) => newParty(gateway, `atk${i}`)));
  const sockets = await open(SOCKETS);
  // Every socket proves every party (known sessions: no lookup), paced under the message rate.
  await Promise.all(
    sockets.map(async (ws) => {
      for (const p of parties) {
        ws.send(JSON.stringify({ op: 'subscribe', id: 'prove', party: [p.id], ...streamProof(p), snapshot: false }));
        await pace(70);
      }
    }),
  );
  for (const k of Object.keys(codes)) delete codes[k];
  await Promise.all(
    sockets.map(async (ws) => {
      let i = 0;
      while (Date.now() < until && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ op: 'subscribe', id: i++, kinds: ['order.update', 'fill'] }));
        await pace(1000 / 15);
      }
    }),
  );
  for (const ws of sockets) ws.close();
  return codes;
}

// ---------------------------------------------------------------------------------------------
// The victim and the phases.

interface Reads {
  fills: number[];
  orders: number[];
}

async function victimReads(gateway: string, victim: Party, seconds: number): Promise<Reads> {
  const pool = new Pool(gateway, { connections: 1, pipelining: 1 });
  const out: Reads = { fills: [], orders: [] };
  const until = Date.now() + seconds * 1000;
  const path = `/v1/users/${victim.id}/orders`;
  while (Date.now() < until) {
    let t = performance.now();
    const a = await pool.request({ method: 'GET', path: '/v1/fills?limit=50' });
    await a.body.dump();
    out.fills.push(performance.now() - t);
    const ts = nextTs(victim);
    const headers = { 'x-user': victim.id, 'x-session-id': victim.sessionId, 'x-session-sig': `${ts}.${signHex(victim.session.priv, `GET\n${path}\n${ts}\n`)}` };
    t = performance.now();
    const b = await pool.request({ method: 'GET', path, headers });
    await b.body.dump();
    if (b.statusCode !== 200) throw new Error(`victim orders read: ${b.statusCode}`);
    out.orders.push(performance.now() - t);
  }
  await pool.close();
  return out;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

interface Phase {
  gateway: string;
  attack: string;
  fills: { n: number; p50: number; p99: number };
  orders: { n: number; p50: number; p99: number };
  attacker: Record<string, number>;
  load: string;
}

async function runAttacker(mode: string, gateway: string, engine: string, seconds: number): Promise<{ done: Promise<Record<string, number>> }> {
  const child = spawnTs('bench/work-budgets.ts', ['attack', mode, gateway, engine, String(seconds)], {});
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<Record<string, number>>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>) : reject(new Error(`attacker exited ${code}`)))),
  );
  return { done };
}

async function phase(name: string, url: string, engine: string, victim: Party, mode: string | null): Promise<Phase> {
  let attacker: { done: Promise<Record<string, number>> } | null = null;
  if (mode) {
    // The snapshot attacker needs a few seconds to make its parties and prove them: it starts first.
    const setup = mode === 'snapshots' ? sized(6, 2) : 1;
    attacker = await runAttacker(mode, url, engine, PHASE_S + setup);
    await new Promise((r) => setTimeout(r, setup * 1000));
  }
  const reads = await victimReads(url, victim, PHASE_S);
  const codes = attacker ? await attacker.done : {};
  const summary = (xs: number[]) => ({ n: xs.length, p50: Number(pct(xs, 50).toFixed(2)), p99: Number(pct(xs, 99).toFixed(2)) });
  return { gateway: name, attack: mode ?? 'none', fills: summary(reads.fills), orders: summary(reads.orders), attacker: codes, load: loadavg().map((l) => l.toFixed(2)).join(' ') };
}

async function main(): Promise<void> {
  const schema = `bench_budgets_${process.pid}`;
  const admin = postgres(DATABASE, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const url = new URL(DATABASE);
  url.searchParams.set('search_path', schema);
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const children: ChildProcess[] = [];
  try {
    await migrate(sql);
    await seed(sql, { seed: 3, parties: 50, fills: sized(50_000, 2_000) });
    const enginePort = await freePort();
    const engine = `http://127.0.0.1:${enginePort}`;
    children.push(spawnTs('sandbox/engine/main.ts', [], { ENGINE_PORT: String(enginePort), ENGINE_ADMIN_TOKEN: TOKEN, ENGINE_TICK_MS: '1000', ENGINE_COMMIT_MS: '5000' }));
    await waitHealthy(engine);
    const gateways: Array<{ name: string; url: string }> = [];
    for (const [name, env] of [
      ['budgets (default)', {}],
      ['no budgets (peer)', { SESSION_LOOKUPS_PER_IP: '10000000', SNAPSHOT_READS_PER_IP: '10000000' }],
    ] as const) {
      const port = await freePort();
      children.push(
        spawnTs('src/main.ts', [], {
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'error',
          DATABASE_URL: url.toString(),
          ENGINE_BASE_URL: engine,
          ENGINE_ADMIN_TOKEN: TOKEN,
          RATE_LIMIT_MAX: '1000000',
          HTTP_MAX_CONNECTIONS_PER_IP: '0',
          WS_ORDERBOOK_POLL_MS: '60000',
          // What is measured is the proofs' and snapshots' budgets at 1 800 messages a second from one
          // address: its message bound (WS_ADDRESS_MESSAGES_PER_S, ADR 0350) would close it first.
          WS_ADDRESS_MESSAGES_PER_S: '0',
          ...env,
        }),
      );
      gateways.push({ name, url: `http://127.0.0.1:${port}` });
    }
    for (const g of gateways) await waitHealthy(g.url);
    const phases: Phase[] = [];
    for (const g of gateways) {
      // A victim of each gateway's own: it learns the session from the answer.
      const victim = await newParty(g.url, 'victim');
      await json(`${engine}/v1/admin/faucet`, 'POST', { party: victim.id, amount: '100000' }, { authorization: `Bearer ${TOKEN}` });
      for (const mode of [null, 'proofs', 'snapshots'] as const) {
        const p = await phase(g.name, g.url, engine, victim, mode);
        phases.push(p);
        shortCheck(`${g.name}, attack ${mode ?? 'none'}`, { 'no victim read': p.fills.n > 0 && p.orders.n > 0 ? 0 : 1, 'attacker got nothing': mode === null || Object.keys(p.attacker).length > 0 ? 0 : 1 });
        process.stderr.write(`${JSON.stringify(p)}\n`);
      }
    }
    const result = { date: new Date().toISOString().slice(0, 10), cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`, node: process.version, phaseS: PHASE_S, phases };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    writeDoc(result);
  } finally {
    for (const c of children.reverse()) await stop(c);
    await sql.end();
    await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

function writeDoc(r: { date: string; cpus: string; node: string; phaseS: number; phases: Phase[] }): void {
  const file = join(ROOT, 'docs/performance.md');
  const text = readFileSync(file, 'utf8');
  const base = new Map(r.phases.filter((p) => p.attack === 'none').map((p) => [p.gateway, p]));
  const ratio = (p: Phase, read: 'fills' | 'orders') => (p[read].p99 / base.get(p.gateway)![read].p99).toFixed(2);
  const rows = r.phases.map(
    (p) =>
      `| ${p.gateway} | ${p.attack} | ${p.fills.p50} / ${p.fills.p99} | ${p.attack === 'none' ? '1' : ratio(p, 'fills')}× | ${p.orders.p50} / ${p.orders.p99} | ${p.attack === 'none' ? '1' : ratio(p, 'orders')}× | ${Object.entries(p.attacker).map(([k, v]) => `${k} ${v}`).join(', ') || '–'} | ${p.load} |`,
  );
  const block = [
    '<!-- budgets-bench:start -->',
    `Measured ${r.date} on ${r.cpus}, Node ${r.node}, ${r.phaseS} s a phase (\`npm run bench:budgets\`): the victim's sequential reads (p50 / p99, ms) alone and while one address attacks from a process on the same machine, on the gateway with its default work budgets and on a peer with the budgets out of reach.`,
    '',
    '| Gateway | Attack | `/v1/fills?limit=50` p50 / p99 | p99 vs alone | signed `/v1/users/:party/orders` p50 / p99 | p99 vs alone | What the attacker got | Load average (1, 5, 15 min) at the end |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '<!-- budgets-bench:end -->',
  ].join('\n');
  const start = text.indexOf('<!-- budgets-bench:start -->');
  const end = text.indexOf('<!-- budgets-bench:end -->');
  const next = start >= 0 && end > start ? text.slice(0, start) + block + text.slice(end + '<!-- budgets-bench:end -->'.length) : `${text.trimEnd()}\n\n## Work budgets under attack\n\n${block}\n`;
  writeDocsFile(file, next);
}

if (process.argv[2] === 'attack') {
  const [, , , mode, gateway, engine, seconds] = process.argv;
  attack(mode!, gateway!, engine!, Number(seconds)).then(
    (codes) => {
      process.stdout.write(`${JSON.stringify(codes)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
} else {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
