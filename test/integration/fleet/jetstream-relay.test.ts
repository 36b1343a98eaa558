// One engine stream for the fleet: two relay processes read the (scripted) engine's SSE and publish
// to a JetStream stream of this test's own; the active relay is killed (SIGKILL) mid-stream and the
// stream still holds every seq once, in order. Replicas with NATS_URL consume the stream: the
// engine never sees them, and a replica started after the events replays `since=` like an old one.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as natsConnect, type NatsConnection } from 'nats';
import { closedPort, fleetServices, NATS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { LiveRuntime } from '../../../src/live.js';
import { streamBounds } from '../../../src/fleet/jetstream.js';
import type { JetStreamSource } from '../../../src/fleet/jetstream-source.js';
import { connect, seqs, ticks } from '../stream/helpers.js';

const available = await fleetServices({ nats: true });
const root = new URL('../../../', import.meta.url).pathname;

interface Relay {
  proc: ChildProcess;
  port: number;
  exited: Promise<void>;
}

describe.skipIf(!available)('JetStream relay and replicas', () => {
  let engine: ScriptedEngine;
  let nc: NatsConnection;
  const stream = uniqueName('js').toUpperCase();
  const subject = `${stream.toLowerCase()}.events`;
  const relays: Relay[] = [];
  const gateways: TestGateway[] = [];

  const natsEnv = { NATS_URL, NATS_STREAM: stream, NATS_SUBJECT: subject, NATS_MAX_AGE_S: '600' };

  async function startRelay(): Promise<Relay> {
    const port = await closedPort();
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/relay/main.ts'], {
      cwd: root,
      env: { ...process.env, ...natsEnv, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: '' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const relay = { proc, port, exited };
    relays.push(relay);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 30_000, 'relay ready');
    return relay;
  }

  async function published(r: Relay): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${r.port}/metrics`)).text();
    return Number(/^bff_relay_events_total\{outcome="published"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  }

  async function streamSeqs(): Promise<number[]> {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(stream);
    const out: number[] = [];
    for (let s = info.state.first_seq; s <= info.state.last_seq; s++) out.push(Number((await jsm.streams.getMessage(stream, { seq: s })).header!.get('Nats-Msg-Id')));
    return out;
  }

  async function replica(): Promise<TestGateway> {
    const gw = await startGateway({ ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, AUTH_DISABLED: 'true', WS_ORDERBOOK_POLL_MS: '60000', ...natsEnv }, { listen: true });
    gateways.push(gw);
    await (gw.deps.live as LiveRuntime).start();
    return gw;
  }

  /** A replica is ready once it has caught up with the stream's head as it was when it started. */
  async function ready(gw: TestGateway): Promise<void> {
    // No database in this test: its reason is the only one left once the stream is caught up.
    await waitFor(async () => ((await (await fetch(`${gw.url}/readyz`)).json()) as any).reasons.join() === 'DATABASE_URL is not set', 10_000, 'replica caught up');
  }

  const lastInStream = async () => (await streamBounds(await nc.jetstreamManager(), stream))?.lastEngineSeq ?? 0;

  beforeAll(async () => {
    engine = await startScriptedEngine();
    nc = await natsConnect({ servers: NATS_URL });
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    for (const r of relays) {
      r.proc.kill('SIGTERM');
      await r.exited;
    }
    await engine.close();
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
    await nc.close();
  });

  it('two relays: the active one killed mid-stream, the other goes on with no seq lost or repeated', async () => {
    await Promise.all([startRelay(), startRelay()]);
    await waitFor(() => engine.open === 2, 10_000, 'two SSE readers');
    const early = await replica(); // consumes the stream from its start
    // It has looked at the stream and found it empty: every event from now on is live for it (were
    // the events there first, they would be its catch-up, which a client without since= never gets).
    await waitFor(() => ((early.deps.live as LiveRuntime).source as JetStreamSource | null)?.ready === true, 5_000, 'replica subscribed');
    const c = await connect(early.url, 'kinds=engine.tick_start');

    engine.push(...ticks(1, 100));
    await waitFor(async () => (await lastInStream()) === 100, 10_000, 'seq 100 in the stream');
    const [a, b] = relays as [Relay, Relay];
    const active = (await published(a)) >= (await published(b)) ? a : b;
    const standby = active === a ? b : a;
    expect(await published(active)).toBeGreaterThan(0);

    let next = 101;
    const pushing = (async () => {
      for (let i = 0; i < 20; i++) {
        engine.push(...ticks(next, next + 9));
        next += 10;
        // Pacing: ten events every 20 ms.
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    // Deliberate: the active relay is killed 60 ms into the pushing, while it publishes.
    await new Promise((r) => setTimeout(r, 60));
    active.proc.kill('SIGKILL');
    await active.exited;
    await pushing;
    await waitFor(async () => (await lastInStream()) === 300, 15_000, 'seq 300 in the stream');

    expect(await streamSeqs()).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(await published(standby)).toBeGreaterThan(0);
    await c.waitFor(() => seqs(c).length >= 300, 10_000);
    expect(seqs(c)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
  });

  it('the engine serves the relays only; a replica started now replays since= from the stream like an old one', async () => {
    const readers = engine.connections.length;
    const late = await replica();
    await ready(late);
    const c = await connect(late.url, 'kinds=engine.tick_start&since=250');
    await c.waitFor(() => seqs(c).length >= 50);
    expect(seqs(c)).toEqual(Array.from({ length: 50 }, (_, i) => 251 + i));
    expect(c.messages.some((m) => m.kind === 'stream.gap')).toBe(false);

    engine.push(...ticks(301, 310));
    await c.waitFor(() => seqs(c).length >= 60);
    expect(seqs(c).slice(50)).toEqual(Array.from({ length: 10 }, (_, i) => 301 + i));
    expect(engine.connections.length).toBe(readers); // no SSE connection from the replicas
    const body = (await (await fetch(`${late.url}/readyz`)).json()) as any;
    expect(body.stream.connected).toBe(true);
    expect(body.engineMaxSeq).toBe(310);
  });
});
