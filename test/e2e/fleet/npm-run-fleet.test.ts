// `npm run fleet -- --observe` as an operator runs it (deploy/fleet.ts: reference engine, indexer,
// two relays, two replicas on the machine's Redis and NATS, nginx, Prometheus with the alert rules),
// and the loss of one member at a time under live stream clients:
//   - a frozen replica (SIGSTOP: its scrapes time out) fires GatewayReplicaDown in Prometheus;
//   - a replica killed with SIGKILL: nginx answers from the other one meanwhile, the fleet restarts it,
//     its stream clients resume through nginx with `since=` and receive every tick exactly once;
//   - the relay killed with SIGKILL: the standby keeps the events flowing, nothing lost or repeated,
//     and the fleet restarts it.
// "Nothing lost or repeated" is checked against the truth: the engine's own admin event stream,
// read by the test alongside.
// Prometheus listens on a port of this project's test block (41850).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fleetServices, forgetFleetState, NATS_URL, REDIS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { PROMETHEUS_BINARY } from '../../../deploy/prometheus.js';
import { request } from 'undici';
import { createParser } from 'eventsource-parser';

/** A port free now (Prometheus needs its port before it starts: it cannot report one it chose). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
let PROMETHEUS_PORT = 0;
const hasPrometheus = existsSync(PROMETHEUS_BINARY);
if (!hasPrometheus && process.env.CI) throw new Error('Prometheus is missing in CI (.ci/run installs Debian prometheus)');
if (!hasPrometheus) console.warn('\n*** SKIPPED: npm run fleet -- --observe needs /usr/bin/prometheus ***\n');
const available = hasPrometheus && (await fleetServices({ redis: true, nats: true, nginx: true }));
const root = new URL('../../../', import.meta.url).pathname;

interface Ready {
  nginx: string;
  replicas: number[];
  relays: number[];
  pids: Record<string, number>;
  prometheus: string;
}

interface StreamClient {
  ws: WebSocket;
  upstream: string;
  ticks: number[];
  closed: Promise<number>;
}

async function streamClient(url: string, query: string): Promise<StreamClient> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream?${query}`);
  const ticks: number[] = [];
  let upstream = '';
  ws.on('upgrade', (res) => (upstream = String(res.headers['x-upstream'] ?? '')));
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { kind: string; seq: number };
    if (m.kind === 'engine.tick_start') ticks.push(m.seq);
  });
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, upstream, ticks, closed };
}

const ADMIN_TOKEN = 'fleet-test-admin-token';

/** The truth: every engine.tick_start seq, read from the engine's own admin event stream. */
async function engineTicks(engineUrl: string, into: number[]): Promise<() => void> {
  const ac = new AbortController();
  const res = await request(`${engineUrl}/v1/admin/events/stream`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/event-stream' }, signal: ac.signal, bodyTimeout: 0 });
  const parser = createParser({
    onEvent: (m) => {
      const e = JSON.parse(m.data) as { kind: string; seq: number };
      if (e.kind === 'engine.tick_start') into.push(e.seq);
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
    } catch {
      // aborted at the end of the test
    }
  })();
  return () => ac.abort();
}

/** The ticks a client saw across its connections, in order, each exactly once, in the reference's window. */
function window(ticks: number[], from: number, to: number): number[] {
  return ticks.filter((s) => s >= from && s <= to);
}

describe.skipIf(!available)('npm run fleet -- --observe: one member lost at a time', () => {
  const name = uniqueName('fleet');
  let dir: string;
  let db: TestDatabase;
  let fleet: ChildProcess;
  let ready: Ready;
  const lines: string[] = [];
  const truth: number[] = [];
  let stopTruth: () => void = () => {};

  /** The pid of a member now: from FLEET_READY, or the last "<name> restarted (pid N" line. */
  function pidOf(member: string): number {
    let pid = ready.pids[member]!;
    for (const line of lines) {
      const m = new RegExp(`\\] *${member} restarted \\(pid (\\d+)`).exec(line);
      if (m) pid = Number(m[1]);
    }
    return pid;
  }
  const restarts = (member: string) => lines.filter((l) => l.includes(`${member} restarted (pid`)).length;

  async function alerts(): Promise<Array<{ labels: Record<string, string>; state: string }>> {
    const res = await fetch(`${ready.prometheus}/api/v1/alerts`);
    return ((await res.json()) as { data: { alerts: Array<{ labels: Record<string, string>; state: string }> } }).data.alerts;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-test-'));
    // Not a fixed port: any process left listening on it (another run's, a bench's) failed the fleet's start.
    PROMETHEUS_PORT = await freePort();
    db = await createTestDatabase({ migrate: false });
    fleet = spawn(
      process.execPath,
      ['--import', 'tsx', 'deploy/fleet.ts', '--observe', '--prometheus-port', String(PROMETHEUS_PORT), '--port', '0', '--engine-port', '0', '--rate', '0', '--external-db', db.url, '--data-dir', dir],
      { cwd: root, env: { ...process.env, FLEET_REPLICAS: '2', FLEET_NAME: name, ENGINE_ADMIN_TOKEN: ADMIN_TOKEN, ENGINE_TICK_MS: '100', LOG_LEVEL: 'warn', REDIS_URL, NATS_URL }, stdio: ['ignore', 'pipe', 'inherit'], detached: true },
    );
    createInterface({ input: fleet.stdout! }).on('line', (line) => {
      lines.push(line);
      if (process.env.TEST_FLEET_LOG) process.stdout.write(`${line}\n`);
    });
    const line = (await waitFor(() => lines.find((l) => l.startsWith('FLEET_READY ')) ?? (fleet.exitCode !== null ? 'exited' : null), 150_000, 'FLEET_READY'))!;
    if (line === 'exited') throw new Error(`the fleet exited: ${lines.slice(-20).join('\n')}`);
    ready = JSON.parse(line.slice('FLEET_READY '.length)) as Ready & { engine: string };
    stopTruth = await engineTicks((ready as Ready & { engine: string }).engine, truth);
  }, 180_000);

  afterAll(async () => {
    stopTruth();
    if (fleet && fleet.exitCode === null) {
      fleet.kill('SIGTERM');
      await new Promise((r) => fleet.once('exit', r));
    }
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await forgetFleetState(`${name.toUpperCase()}_ENGINE_EVENTS`, `${name}:`);
  }, 60_000);

  it('Prometheus scrapes every replica and relay with the alert rules loaded', async () => {
    await waitFor(async () => {
      const res = await fetch(`${ready.prometheus}/api/v1/query?query=${encodeURIComponent('up')}`);
      const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } };
      return body.data.result.length === 4 && body.data.result.every((r) => r.value[1] === '1');
    }, 30_000, 'four targets up');
    const rules = (await (await fetch(`${ready.prometheus}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ name: string }> }> } };
    expect(rules.data.groups.flatMap((g) => g.rules.map((r) => r.name))).toContain('GatewayReplicaDown');
    // Nothing fires once every member is up (a member still starting may have made one pending).
    await waitFor(async () => (await alerts()).length === 0, 30_000, 'no alert');
  }, 60_000);

  it('a frozen replica fires GatewayReplicaDown for its instance, which clears when it answers again', async () => {
    const victim = `127.0.0.1:${ready.replicas[0]}`;
    const pid = pidOf('gw-1');
    process.kill(pid, 'SIGSTOP');
    try {
      await waitFor(async () => (await alerts()).some((a) => a.labels.alertname === 'GatewayReplicaDown' && a.labels.instance === victim && a.state === 'firing'), 45_000, 'GatewayReplicaDown firing');
      const firing = (await alerts()).filter((a) => a.labels.alertname === 'GatewayReplicaDown');
      expect(firing.map((a) => a.labels.instance)).toEqual([victim]);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitFor(async () => !(await alerts()).some((a) => a.labels.alertname === 'GatewayReplicaDown'), 45_000, 'GatewayReplicaDown resolved');
  }, 120_000);

  it('SIGKILL of a replica: nginx serves from the other, the fleet restarts it, its stream clients resume with nothing lost or repeated', async () => {
    // A reference client on the replica that stays, and clients through nginx (spread by round robin).
    const survivorPort = ready.replicas[1]!;
    const reference = await streamClient(`http://127.0.0.1:${survivorPort}`, 'kinds=engine.tick_start');
    const clients: StreamClient[] = [];
    for (let i = 0; i < 4; i++) clients.push(await streamClient(ready.nginx, 'kinds=engine.tick_start'));
    const onVictim = clients.filter((c) => c.upstream.endsWith(`:${ready.replicas[0]}`));
    expect(onVictim.length).toBeGreaterThan(0);
    await waitFor(() => clients.every((c) => c.ticks.length >= 5) && reference.ticks.length >= 5, 20_000, 'ticks before the kill');
    const from = Math.max(...clients.map((c) => c.ticks[0]!), reference.ticks[0]!);

    const before = restarts('gw-1');
    process.kill(pidOf('gw-1'), 'SIGKILL');
    const seen = new Map<StreamClient, number[]>();
    for (const c of clients) {
      if (!onVictim.includes(c)) continue;
      expect(await c.closed).toBe(1006);
      const earlier = [...c.ticks];
      const again = await streamClient(ready.nginx, `kinds=engine.tick_start&since=${earlier.at(-1)}`);
      expect(again.upstream.endsWith(`:${ready.replicas[0]}`)).toBe(false); // nginx routed around the dead one
      seen.set(c, earlier);
      c.ws = again.ws;
      c.ticks = again.ticks;
    }
    // Served meanwhile: every plain request through nginx answers.
    for (let i = 0; i < 6; i++) expect((await fetch(`${ready.nginx}/v1/time`)).status).toBe(200);
    await waitFor(() => restarts('gw-1') > before, 30_000, 'gw-1 restarted');
    await waitFor(async () => (await fetch(`http://127.0.0.1:${ready.replicas[0]}/readyz`).catch(() => null))?.status === 200, 60_000, 'gw-1 ready again');

    const to = reference.ticks.at(-1)! + 0;
    await waitFor(() => clients.every((c) => (c.ticks.at(-1) ?? 0) >= to), 20_000, 'ticks after the restart');
    const want = window(reference.ticks, from, to);
    expect(want.length).toBeGreaterThan(10);
    await waitFor(() => (truth.at(-1) ?? 0) >= to, 10_000, 'the engine stream reader');
    expect(want).toEqual(window(truth, from, to)); // the surviving replica itself missed none
    for (const c of clients) expect(window([...(seen.get(c) ?? []), ...c.ticks], from, to)).toEqual(want);
    for (const c of [...clients, reference]) c.ws.close();
  }, 180_000);

  it('SIGKILL of a relay: the standby keeps the events flowing, nothing lost or repeated, and the fleet restarts it', async () => {
    const clients: StreamClient[] = [];
    for (let i = 0; i < 2; i++) clients.push(await streamClient(ready.nginx, 'kinds=engine.tick_start'));
    await waitFor(() => clients.every((c) => c.ticks.length >= 5), 20_000, 'ticks before the kill');
    const from = Math.max(...clients.map((c) => c.ticks[0]!));
    const before = restarts('relay-1');
    process.kill(pidOf('relay-1'), 'SIGKILL');
    const killedAt = Math.max(...clients.map((c) => c.ticks.at(-1)!));
    // Events keep coming: well past the kill, through the standby.
    await waitFor(() => clients.every((c) => (c.ticks.at(-1) ?? 0) >= killedAt + 30), 30_000, 'ticks after the relay kill');
    await waitFor(() => restarts('relay-1') > before, 30_000, 'relay-1 restarted');
    const to = Math.min(...clients.map((c) => c.ticks.at(-1)!));
    await waitFor(() => (truth.at(-1) ?? 0) >= to, 10_000, 'the engine stream reader');
    const want = window(truth, from, to);
    expect(want.length).toBeGreaterThan(20);
    // Every tick the engine emitted, each once, in order, to every client: none lost or repeated across the failover.
    for (const c of clients) expect(window(c.ticks, from, to)).toEqual(want);
    for (const c of clients) c.ws.close();
  }, 120_000);
});
