// A stream that holds less than was published: what a new stream leader elected without the last
// messages looks like (seen on a cluster after leader step-downs: ~1 600 messages the replicas had
// already delivered were gone). Made here without a cluster: the stream is copied up to seq 20,
// deleted and made again with those 20 messages at the same stream seqs, after 30 were published
// and delivered. The relay must realign on what the stream holds and republish 21.. from the
// engine; the replica, already at 30, must take the republished 21..30 for what they are
// (redeliveries of its own history, same stream-seq offset), not for a replaced history: its
// client gets 1..40 once each and no stream.reset.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as natsConnect, headers, type NatsConnection } from 'nats';
import { fleetServices, NATS_URL, startTestRelay, streamEngineSeqs, uniqueName, waitFor } from '../../support/fleet.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { LiveRuntime } from '../../../src/live.js';
import type { JetStreamSource } from '../../../src/fleet/jetstream-source.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import { connect, seqs, ticks } from '../stream/helpers.js';

const available = await fleetServices({ nats: true });

describe.skipIf(!available)('the stream loses its tail', () => {
  let engine: ScriptedEngine;
  let relay: EngineRelay;
  let gw: TestGateway;
  let nc: NatsConnection;
  const stream = uniqueName('tail').toUpperCase();
  const subject = `${stream.toLowerCase()}.events`;

  const engineSeqs = () => streamEngineSeqs(nc, stream);

  beforeAll(async () => {
    engine = await startScriptedEngine();
    nc = await natsConnect({ servers: NATS_URL });
    relay = await startTestRelay({ stream, subject, engine });
    gw = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, AUTH_DISABLED: 'true', WS_ORDERBOOK_POLL_MS: '60000', NATS_URL, NATS_STREAM: stream, NATS_SUBJECT: subject },
      { listen: true },
    );
    await (gw.deps.live as LiveRuntime).start();
    await waitFor(() => ((gw.deps.live as LiveRuntime).source as JetStreamSource | null)?.ready === true, 5_000, 'replica subscribed');
  });
  afterAll(async () => {
    await gw?.close();
    await relay?.stop();
    await engine?.close();
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  it('the relay republishes what the stream lost; the replica neither repeats nor resets', async () => {
    const c = await connect(gw.url, 'control=true&kinds=engine.tick_start');
    engine.push(...ticks(1, 30));
    await c.waitFor(() => seqs(c).length === 30, 10_000);

    // The tail 21..30 is lost: the stream is made again with 1..20 at stream seqs 1..20.
    const jsm = await nc.jetstreamManager();
    const { config } = await jsm.streams.info(stream);
    const kept = [];
    for (let s = 1; s <= 20; s++) kept.push(await jsm.streams.getMessage(stream, { seq: s }));
    await jsm.streams.delete(stream);
    await jsm.streams.add(config);
    const js = nc.jetstream();
    for (const m of kept) {
      const h = headers();
      h.set('Nats-Msg-Id', m.header!.get('Nats-Msg-Id'));
      await js.publish(subject, m.data, { headers: h });
    }
    expect(await engineSeqs()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));

    engine.push(...ticks(31, 40));
    await waitFor(async () => (await engineSeqs().catch(() => [])).length >= 40, 15_000, 'seq 40 in the stream');
    expect(await engineSeqs()).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    await c.waitFor(() => seqs(c).length >= 40, 15_000);
    await new Promise((r) => setTimeout(r, 300)); // nothing more comes (no repeat of 21..30)
    expect(seqs(c)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(c.messages.filter((m) => m.kind === 'stream.reset')).toEqual([]);
    expect((gw.deps.live as LiveRuntime).status().gap).toBeUndefined();
  });
});
