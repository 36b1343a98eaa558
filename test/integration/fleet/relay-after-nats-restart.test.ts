// The relay after a NATS server restart whose stream's last message is older than the duplicate
// window (a quiet market, or a server down for minutes): the server then no longer knows the
// stream's last message id (it keeps it in memory only, rebuilt from the messages inside the
// window), so a relay that conditioned its publishes on the last message id was refused "wrong
// last msg id" for ever and published nothing again (the loop the issue saw after leader changes).
// The relay conditions on the stream's last sequence, which survives: it goes on. The window is
// shortened to 1 s here so that the test does not wait two minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, nanos, type NatsConnection } from 'nats';
import { startTestRelay, streamEngineSeqs, waitFor } from '../../support/fleet.js';
import { natsServerAvailable, SingleNats } from '../../support/nats-cluster.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import { ticks } from '../stream/helpers.js';

const available = natsServerAvailable();
if (!available && process.env.CI) throw new Error('this test needs /usr/sbin/nats-server');

describe.skipIf(!available)('the relay after a NATS restart', () => {
  let engine: ScriptedEngine;
  let relay: EngineRelay;
  let nats: SingleNats;
  let nc: NatsConnection;
  const stream = 'RESTART';
  const engineSeqs = () => streamEngineSeqs(nc, stream);

  beforeAll(async () => {
    nats = await SingleNats.start();
    engine = await startScriptedEngine();
    relay = await startTestRelay({ stream, subject: 'restart.events', engine, natsUrl: nats.url, maxBytes: 16 * 1024 * 1024 });
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });
  afterAll(async () => {
    await relay?.stop();
    await nc?.close();
    await engine?.close();
    await nats?.remove();
  });

  it('publishes again after the restart: the stream holds 1..40 once each', async () => {
    engine.push(...ticks(1, 20));
    await waitFor(async () => (await engineSeqs()).length === 20, 10_000, 'seq 20 in the stream');
    const jsm = await nc.jetstreamManager();
    const { config } = await jsm.streams.info(stream);
    await jsm.streams.update(stream, { ...config, duplicate_window: nanos(1_000) });
    await new Promise((r) => setTimeout(r, 1_500)); // the last message is now older than the window

    await nats.stop();
    await nats.start();
    engine.push(...ticks(21, 40));
    await waitFor(async () => (await engineSeqs().catch(() => [])).length >= 40, 15_000, 'seq 40 in the stream');
    expect(await engineSeqs()).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(relay.streamLastSeq).toBe(40);
  });
});
