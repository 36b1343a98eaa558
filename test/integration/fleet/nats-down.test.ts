// NATS down and back, on a throwaway nats-server of this test's own (the machine's NATS is shared
// by other tests and is never stopped): the replica says so in /readyz while it is down, the relay
// keeps nothing in memory, and once NATS is back the relay resumes from the stream's last seq and
// the replica receives every event pushed meanwhile, once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetServices, waitFor, startTestRelay } from '../../support/fleet.js';
import { natsServerAvailable, SingleNats } from '../../support/nats-cluster.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { LiveRuntime } from '../../../src/live.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import { connect, seqs, ticks } from '../stream/helpers.js';
import pino from 'pino';

const available = (await fleetServices({ nats: true })) && natsServerAvailable();

describe.skipIf(!available)('NATS down and back', () => {
  let engine: ScriptedEngine;
  let relay: EngineRelay;
  let gw: TestGateway;
  let nats: SingleNats;
  // The replica's log, as JSON lines (what an operator reads).
  const logLines: Array<{ level: number; msg: string; dependency?: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

  beforeAll(async () => {
    nats = await SingleNats.start();
    engine = await startScriptedEngine();
    const url = nats.url;
    relay = await startTestRelay({ stream: 'DOWN', subject: 'down.events', engine, natsUrl: url, maxBytes: 16 * 1024 * 1024 });
    gw = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, AUTH_DISABLED: 'true', WS_ORDERBOOK_POLL_MS: '60000', NATS_URL: url, NATS_STREAM: 'DOWN', NATS_SUBJECT: 'down.events' },
      { listen: true, overrides: { logger } },
    );
    await (gw.deps.live as LiveRuntime).start();
  });
  afterAll(async () => {
    await gw?.close();
    await relay?.stop();
    await engine?.close();
    await nats?.remove();
  });

  const readyz = async () => (await (await fetch(`${gw.url}/readyz`)).json()) as any;

  it('the replica reports the outage, then catches up with nothing lost or repeated', async () => {
    const c = await connect(gw.url, 'kinds=engine.tick_start');
    engine.push(...ticks(1, 20));
    await c.waitFor(() => seqs(c).length === 20, 10_000);
    expect((await readyz()).stream).toMatchObject({ connected: true, source: 'jetstream' });

    await nats.stop();
    engine.push(...ticks(21, 40)); // the relay cannot publish these now
    await waitFor(async () => (await readyz()).reasons.includes('JetStream source down or catching up'), 10_000, 'outage reported');

    await nats.start();
    engine.push(...ticks(41, 50));
    await c.waitFor(() => seqs(c).length >= 50, 20_000);
    expect(seqs(c)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    await waitFor(async () => (await readyz()).stream.connected === true, 10_000, 'ready again');
    // One warning when NATS went, one when it came back, at the default level.
    expect(logLines.filter((l) => l.dependency === 'nats').map((l) => [l.level, l.msg])).toEqual([
      [40, 'nats: unreachable'],
      [40, 'nats: reachable again'],
    ]);
  });
});
