// What the fleet tests need from the machine: Redis, NATS with JetStream, nginx. Outside CI a
// missing one makes its tests skip, loudly (a warning naming what is missing); in CI (CI=true) it
// fails them, since .ci/run installs and starts them.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { connect as tcpConnect, createServer } from 'node:net';
import { nginxBinary } from '../../deploy/nginx.js';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { Registry } from 'prom-client';
import { EngineRelay } from '../../src/relay/relay.js';
import { Redis } from 'ioredis';
import { connect as natsConnect, type NatsConnection } from 'nats';
import { streamBounds } from '../../src/fleet/jetstream.js';
import WebSocket from 'ws';
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';
import { startScriptedEngine, type ScriptedEngine } from './scripted-sse.js';
import { eventually } from './eventually.js';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

export function tcpReachable(url: string, timeoutMs = 1_000): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = tcpConnect({ host: u.hostname, port: Number(u.port) });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** true when every named service is there; otherwise warns (skip) or throws in CI. */
export async function fleetServices(needs: { redis?: boolean; nats?: boolean; nginx?: boolean }): Promise<boolean> {
  const missing: string[] = [];
  if (needs.redis && !(await tcpReachable(REDIS_URL))) missing.push(`Redis at ${REDIS_URL}`);
  if (needs.nats && !(await tcpReachable(NATS_URL))) missing.push(`NATS at ${NATS_URL}`);
  if (needs.nginx && nginxBinary() === null) missing.push('nginx (apt-get install nginx)');
  if (missing.length === 0) return true;
  const text = `fleet tests need ${missing.join(', ')}`;
  if (process.env.CI) throw new Error(`${text} (CI installs and starts them in .ci/run)`);
  console.warn(`\n*** SKIPPED: ${text} ***\n`);
  return false;
}

/** A key prefix / stream name no other test file uses. */
export function uniqueName(tag: string): string {
  return `t_${tag}_${process.pid}_${randomBytes(3).toString('hex')}`;
}

/** A loopback port with nothing listening (taken, then released). */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** `eventually` (test/support/eventually.ts) with this file's older argument order. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  return eventually(check, { timeoutMs, what, everyMs: 25 });
}

/**
 * Removes what a fleet test left in the shared services: its JetStream stream and its Redis keys
 * (every key under `redisPrefix`). The services outlive the test run, and other runs share them.
 */
export async function forgetFleetState(stream: string, redisPrefix: string): Promise<void> {
  const nc = await natsConnect({ servers: NATS_URL });
  try {
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
  const r = new Redis(REDIS_URL);
  try {
    const keys = await r.keys(`${redisPrefix}*`);
    if (keys.length) await r.del(...keys);
  } finally {
    r.disconnect();
  }
}

/**
 * A relay (src/relay) from an engine's admin stream into a JetStream stream of its own, started:
 * no fill from a database, an empty stream starting from the engine's first event, silent logs.
 */
export async function startTestRelay(o: {
  stream: string;
  subject: string;
  engine: { url: string; token: string };
  natsUrl?: string;
  maxBytes?: number;
  replicas?: number;
  engineHead?: () => Promise<number | null>;
  /** Where its metrics go (a fresh registry otherwise). */
  registry?: Registry;
}): Promise<EngineRelay> {
  const relay = new EngineRelay({
    url: o.natsUrl ?? NATS_URL,
    ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
    ...(o.engineHead ? { engineHead: o.engineHead } : {}),
    stream: o.stream,
    subject: o.subject,
    maxAgeS: 600,
    maxBytes: o.maxBytes ?? 64 * 1024 * 1024,
    engineStreamUrl: `${o.engine.url}/v1/admin/events/stream`,
    token: o.engine.token,
    idleMs: 10_000,
    emptyStreamStartAfter: async () => 0,
    fillFrom: null,
    logger: pino({ level: process.env.FLEET_TEST_LOG ?? 'silent', base: { role: 'test-relay' } }),
    registry: o.registry ?? new Registry(),
  });
  await relay.start();
  return relay;
}

/** The engine seqs (message ids) the stream holds, in stream order. */
export async function streamEngineSeqs(nc: NatsConnection, stream: string): Promise<number[]> {
  const jsm = await nc.jetstreamManager();
  const b = await streamBounds(jsm, stream);
  const out: number[] = [];
  for (let s = b?.firstStreamSeq ?? 1; b && s <= b.lastStreamSeq; s++) out.push(Number((await jsm.streams.getMessage(stream, { seq: s })).header!.get('Nats-Msg-Id')));
  return out;
}

/** A gateway replica in its own process (`src/main.ts`), as a fleet runs it. */
export interface Replica {
  port: number;
  proc: ChildProcess;
  exited: Promise<void>;
}

const ROOT = new URL('../../', import.meta.url).pathname;

/** Starts a replica on `port` with `env` (the whole environment it gets) and waits for its /healthz. */
export async function startReplica(
  port: number,
  env: NodeJS.ProcessEnv,
  o: { host?: string; spawn?: (command: string, args: string[], options: SpawnOptions) => ChildProcess } = {},
): Promise<Replica> {
  const proc = (o.spawn ?? spawn)(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  await waitFor(async () => (await fetch(`http://${o.host ?? '127.0.0.1'}:${port}/healthz`).catch(() => null))?.status === 200, 30_000, `replica :${port}`);
  return { port, proc, exited };
}

/** Stops replicas with SIGTERM (their graceful shutdown) and waits for each to exit. */
export async function stopReplicas(replicas: readonly Replica[]): Promise<void> {
  for (const r of replicas) {
    r.proc.kill('SIGTERM');
    await r.exited;
  }
}

/** A stream client (`kinds=engine.tick_start`) at `base` (a gateway or nginx), collecting the seqs it is sent, open. */
export async function tickClient(base: string): Promise<{ ws: WebSocket; seqs: number[] }> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/stream?kinds=engine.tick_start`);
  const seqs: number[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.kind === 'engine.tick_start') seqs.push(m.seq);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, seqs };
}

/**
 * In-process gateway replicas with their live runtime started and streaming, each knowing one
 * session key (the fault tests sign with it before the stream could teach it).
 */
export async function startLiveReplicas(
  count: number,
  start: (i: number) => Promise<TestGateway>,
  session: { id: string; party: string; publicKeyHex: string },
): Promise<TestGateway[]> {
  const gws: TestGateway[] = [];
  for (let i = 0; i < count; i++) {
    const gw = await start(i);
    gws.push(gw);
    gw.deps.sessions.add(session.id, session.party, session.publicKeyHex, Date.now() + 3_600_000);
    await gw.deps.live!.start();
  }
  await waitFor(() => gws.every((g) => g.deps.live!.status().connected), 10_000, 'replicas streaming');
  return gws;
}

/** Waits until every client got `last`, then holds each to every seq from `from` to `last`, once, in order; closes them. */
export async function expectEveryTickOnce(clients: Array<{ ws: WebSocket; seqs: number[] }>, from: number, last: number): Promise<void> {
  await waitFor(() => clients.every((c) => c.seqs.at(-1) === last), 10_000, 'clients caught up');
  const want = Array.from({ length: last - from + 1 }, (_, i) => from + i);
  for (const c of clients) {
    expect(c.seqs.filter((s) => s >= from)).toEqual(want);
    c.ws.close();
  }
}

/**
 * A scripted engine that takes orders: `POST /v1/orders` answers a resting order and records the
 * signature it carried (`orderSigs`, in arrival order); BTC-PERP has a one-level book.
 */
export async function startOrderTakingEngine(): Promise<{ engine: ScriptedEngine; orderSigs: string[] }> {
  const engine = await startScriptedEngine();
  const orderSigs: string[] = [];
  engine.books.set('BTC-PERP', { seq: 1, bids: [['99.0000000000', '1.0000000000']], asks: [] });
  engine.handler = (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/orders') return false;
    orderSigs.push(String(req.headers['x-session-sig']));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, orderId: `o-${orderSigs.length}`, status: 'resting' }));
    return true;
  };
  return { engine, orderSigs };
}

/**
 * A throwaway redis-server of the test's own on `port` (no persistence: a restart comes back empty),
 * for tests that stop or restart Redis; the machine's shared Redis is never stopped.
 */
export function ownRedis(port: number): { start(): Promise<void>; kill(): Promise<void>; running(): boolean } {
  let proc: ChildProcess | null = null;
  return {
    async start() {
      proc = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(() => tcpReachable(`redis://127.0.0.1:${port}`), 10_000, 'redis-server');
    },
    async kill() {
      const p = proc;
      if (!p) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
      proc = null;
    },
    running: () => proc !== null,
  };
}

/** Node closes an idle keep-alive socket this long after its keepAliveTimeout (http.Server keepAliveTimeoutBuffer). */
const NODE_KEEP_ALIVE_BUFFER_MS = 1_000;

/**
 * Idle gaps (ms) that put a request on nginx's idle connections to the replicas just short of and
 * just past each moment one of them is closed: by nginx (its derived idle timeout), at the replica's
 * keep-alive timeout, and when the replica really closes it (Node waits 1 s more).
 */
export function idleGapsAround(replicaKeepAliveMs: number, proxyIdleMs: number): number[] {
  const closing = replicaKeepAliveMs + NODE_KEEP_ALIVE_BUFFER_MS;
  return [proxyIdleMs - 100, proxyIdleMs + 50, replicaKeepAliveMs - 50, replicaKeepAliveMs + 50, closing - 100, closing - 40, closing - 15, closing, closing + 15, closing + 40, closing + 100];
}

/** Runs `burst` once to open connections, then again after each idle gap; every answer, in order. */
export async function burstsAfterIdleGaps<T>(gaps: readonly number[], burst: () => Promise<T[]>): Promise<T[]> {
  const answers: T[] = await burst();
  for (const gap of gaps) {
    await new Promise((r) => setTimeout(r, gap));
    answers.push(...(await burst()));
  }
  return answers;
}
