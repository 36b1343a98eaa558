// The direct get a replica reads the stream with while a cluster has no meta leader
// (src/fleet/jetstream-source.ts): the relay's stream allows it, it returns a message by stream seq
// with its subject, "not stored" is null, and a stream that does not allow it leaves it unanswered
// (the source then uses the API's message get). On the machine's NATS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect as natsConnect, type NatsConnection } from 'nats';
import { fleetServices, NATS_URL, uniqueName } from '../../support/fleet.js';
import { directGet, directLast, ensureStream, streamBounds } from '../../../src/fleet/jetstream.js';

const available = await fleetServices({ nats: true });

describe.skipIf(!available)('a direct get of the engine stream', () => {
  let nc: NatsConnection;
  const stream = uniqueName('direct').toUpperCase();
  const subject = `${stream.toLowerCase()}.events`;
  const plain = `${stream}_PLAIN`;

  beforeAll(async () => {
    nc = await natsConnect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    await ensureStream(jsm, { url: NATS_URL, stream, subject, maxAgeS: 600, maxBytes: 1024 * 1024 });
    await jsm.streams.add({ name: plain, subjects: [`${subject}.plain`] });
    const js = nc.jetstream();
    for (let i = 1; i <= 3; i++) await js.publish(subject, new TextEncoder().encode(`event ${i}`), { msgID: String(i) });
    await js.publish(`${subject}.plain`, new TextEncoder().encode('plain'));
  });

  afterAll(async () => {
    const jsm = await nc.jetstreamManager();
    for (const s of [stream, plain]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  });

  it('the relay makes the stream with direct gets allowed, and the bounds say so', async () => {
    const jsm = await nc.jetstreamManager();
    expect((await jsm.streams.info(stream)).config.allow_direct).toBe(true);
    expect((await streamBounds(jsm, stream))?.allowDirect).toBe(true);
    expect((await streamBounds(jsm, plain))?.allowDirect).toBe(false);
  });

  it('returns the message at a stream seq with its subject, and null past the end', async () => {
    const m = await directGet(nc, stream, 2, 2_000);
    expect(m && { seq: m.seq, subject: m.subject, text: new TextDecoder().decode(m.data) }).toEqual({ seq: 2, subject, text: 'event 2' });
    expect(await directGet(nc, stream, 4, 2_000)).toBeNull();
  });

  it("returns the stream's last message with its engine seq (what a relay realigns on without a stream info)", async () => {
    const m = await directLast(nc, stream, subject, 2_000);
    expect(m && { seq: m.seq, msgId: m.msgId }).toEqual({ seq: 3, msgId: '3' });
    expect(await directLast(nc, stream, `${subject}.none`, 2_000)).toBeNull();
  });

  it('a stream made before without direct gets gets them when a relay starts on it', async () => {
    const jsm = await nc.jetstreamManager();
    const old = `${stream}_OLD`;
    await jsm.streams.add({ name: old, subjects: [`${subject}.old`], duplicate_window: 120_000_000_000 });
    try {
      await ensureStream(jsm, { url: NATS_URL, stream: old, subject: `${subject}.old`, maxAgeS: 600, maxBytes: 1024 * 1024 });
      expect((await jsm.streams.info(old)).config.allow_direct).toBe(true);
    } finally {
      await jsm.streams.delete(old).catch(() => undefined);
    }
  });

  it('is left unanswered by a stream that does not allow it', async () => {
    await expect(directGet(nc, plain, 1, 500)).rejects.toThrow(/timeout/i);
  });
});
