// One signed order must not stop the live stream (issue 29). The reference engine copies an order's
// body, unknown fields included, into its `inbound.order` event; a body of ~300 KB full of `1e20`
// comes back as an event of ~1.3 MB, over SSE_MAX_EVENT_BYTES (1 MiB). The order is sent to the
// engine directly (the gateway's trading routes refuse such a body themselves), by a party with a
// session, as any client of the engine could. Then an ordinary order follows, and its frames must
// reach a WebSocket client of the gateway within a second: over the gateway's own SSE bridge (the
// event skipped and announced as `stream.gap`; or, with the indexer's database, taken from there),
// and through a fleet's relay and JetStream.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { fundedClient, type SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testGateway, testLiveGateway } from '../../support/stacks.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { fleetServices, forgetFleetState, NATS_URL, startTestRelay, uniqueName, waitFor } from '../../support/fleet.js';
import { connect, type Msg, type TestClient } from '../../integration/stream/helpers.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import type { LiveRuntime } from '../../../src/live.js';
import { eventually } from '../../support/eventually.js';

/** An order the engine accepts to read, whose inbound.order event is ~1.3 MB (its body stays under the engine's 1 MiB). */
function hugeOrder(): string {
  const junk = `[${Array.from({ length: 60_000 }, () => '1e20').join(',')}]`;
  return `{"market":"BTC-PERP","side":"buy","type":"limit","size":"0.01","price":"1","junk":${junk}}`;
}

/** Sends the huge order to the engine, then an ordinary one; resolves with the seq of the huge event and when the ordinary one was answered. */
async function attack(engine: RunningEngine, party: SigningClient): Promise<{ hugeSeq: number; after: number; answeredAt: number }> {
  const body = hugeOrder();
  expect(body.length).toBeLessThan(1024 * 1024);
  const huge = await party.signed('POST', '/v1/orders', body);
  expect(huge.status).toBe(200); // read and rejected (no funds at that price, or below the minimum): it is still an event
  const hugeSeq = engine.engine.log.eventsSince(0).find((e) => e.kind === 'inbound.order' && JSON.stringify(e.payload).length > 1_048_576)?.seq;
  expect(hugeSeq).toBeTypeOf('number');
  const ok = await party.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '90000' });
  const answeredAt = Date.now();
  expect(ok.body).toMatchObject({ ok: true });
  return { hugeSeq: hugeSeq!, after: engine.engine.log.maxSeq, answeredAt };
}

/**
 * Waits until the gateway's stream has delivered the engine's newest event. The huge event must
 * come after one it delivered: a gateway whose stream has delivered nothing yet joins at the
 * engine's head when it reconnects, past the huge event, which is then neither streamed nor a gap
 * (the start of its stream, by design). On a loaded CI machine the gateway's first connection came
 * after the party's funding, and both cases failed that way.
 */
async function delivered(gw: { live: LiveRuntime }, engine: RunningEngine): Promise<void> {
  const head = engine.engine.log.maxSeq;
  await eventually(() => (gw.live.status().maxSeq ?? 0) >= head, { what: () => `the gateway's stream at seq ${head} (it is at ${gw.live.status().maxSeq})` });
}

/** Waits until the client has a message with seq ≥ `seq`; the time it took after `since`. */
async function within(c: TestClient, seq: number, since: number, ms: number): Promise<number> {
  await c.waitFor((ms2) => ms2.some((m) => !m.kind.startsWith('stream.') && (m.seq ?? 0) >= seq), ms);
  return Date.now() - since;
}

describe('an event over SSE_MAX_EVENT_BYTES, on the SSE bridge', () => {
  let engine: RunningEngine;
  let gw: TestGateway & { live: LiveRuntime };
  let party: SigningClient;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, { url: engine.url, adminToken: engine.adminToken });
    party = await fundedClient(engine.url, engine.adminToken, '1000', 'mallory');
    await delivered(gw, engine);
  });

  it('is skipped and announced (stream.gap), the events after it reach clients within a second, /readyz stays ready', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'control=true');
    const { hugeSeq, after, answeredAt } = await attack(engine, party);
    const took = await within(c, after, answeredAt, 1_000);
    expect(took).toBeLessThan(1_000);
    const gap = c.messages.find((m) => m.kind === 'stream.gap') as Msg;
    expect(gap.payload).toEqual({ requestedSince: hugeSeq - 1, oldestAvailableSeq: hugeSeq + 1, backfill: `/v1/events?since=${hugeSeq - 1}` });
    expect(c.frames().some((m) => m.seq === hugeSeq)).toBe(false);
    expect(c.schemaErrors).toEqual([]);
    // One order is no reason to leave the load balancer's rotation. Connected again (the connection
    // that met the event was dropped by design; once, on a loaded CI machine, /readyz was asked while
    // the bridge was between two connections), and no gap held against it.
    const ready = await eventually(async () => {
      const r = (await (await fetch(`${gw.url}/readyz`)).json()) as { stream: Record<string, unknown> };
      return r.stream.connected === true ? r : null;
    }, { what: "/readyz's stream connected again", timeoutMs: 5_000 });
    expect(ready.stream.gap).toBeUndefined();
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^bff_sse_oversized_total 1$/m);
    // And it stays flowing: later events, one connection (no reconnect loop).
    const more = await party.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '90001' });
    expect(more.body).toMatchObject({ ok: true });
    await within(c, engine.engine.log.maxSeq, Date.now(), 1_000);
    expect(gw.live.status().connected).toBe(true);
    c.ws.close();
  });
});

describe('an event over SSE_MAX_EVENT_BYTES, with the indexer database', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let indexer: RunningIndexer;
  let gw: TestGateway & { live: LiveRuntime };
  let party: SigningClient;

  // Closed last started first: the gateway, the indexer, the engine, the database.
  const file = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
    engine = await testEngine(file);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken });
    file.onTestFinished(() => indexer.close());
    gw = await testLiveGateway(file, { url: engine.url, adminToken: engine.adminToken }, { DATABASE_URL: db.url });
    party = await fundedClient(engine.url, engine.adminToken, '1000', 'mallory');
    await delivered(gw, engine);
  }, 60_000);

  it('is taken from the events table when the indexer already has it (else announced as a gap), and what follows flows within a second', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'control=true');
    const { hugeSeq, after, answeredAt } = await attack(engine, party);
    const took = await within(c, after, answeredAt, 1_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(c.messages.map((m) => [m.kind, m.seq]))}`);
    });
    expect(took).toBeLessThan(1_000);
    // The indexer trails the engine: whichever it was, the huge event is either streamed whole or announced, never both, never neither.
    const streamed = c.frames().some((m) => m.seq === hugeSeq);
    const gaps = c.messages.filter((m) => m.kind === 'stream.gap');
    expect(streamed ? gaps : gaps.map((g) => g.payload.oldestAvailableSeq)).toEqual(streamed ? [] : [hugeSeq + 1]);
    c.ws.close();
  });
});

const fleet = await fleetServices({ nats: true });

describe.skipIf(!fleet)('an event over SSE_MAX_EVENT_BYTES, through the relay and JetStream', () => {
  let engine: RunningEngine;
  let relay: EngineRelay;
  let gw: TestGateway & { live: LiveRuntime };
  let party: SigningClient;
  const name = uniqueName('oversized');
  const stream = name.toUpperCase();

  // Closed last started first: the gateway, the relay, the engine, then the fleet's state forgotten.
  const file = fileScope();
  beforeAll(async () => {
    file.onTestFinished(() => forgetFleetState(stream, `${name}:`));
    engine = await testEngine(file);
    party = await fundedClient(engine.url, engine.adminToken, '1000', 'mallory');
    relay = await startTestRelay({ stream, subject: `${name}.events`, engine: { url: engine.url, token: engine.adminToken } });
    file.onTestFinished(() => relay.stop());
    await waitFor(() => relay.streamLastSeq === engine.engine.log.maxSeq, 10_000, 'relay');
    const started = await testGateway(
      file,
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, NATS_URL, NATS_STREAM: stream, NATS_SUBJECT: `${name}.events` },
      { listen: true },
    );
    const live = started.deps.live as LiveRuntime;
    await live.start();
    await waitFor(() => live.status().connected, 10_000, 'replica caught up');
    gw = Object.assign(started, { live });
  }, 60_000);

  it('the relay moves past it, and a replica streams what follows within a second (the hole announced as stream.gap)', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'control=true');
    const { hugeSeq, after, answeredAt } = await attack(engine, party);
    const took = await within(c, after, answeredAt, 1_000);
    expect(took).toBeLessThan(1_000);
    expect(relay.streamLastSeq).toBe(after);
    const gap = c.messages.find((m) => m.kind === 'stream.gap') as Msg;
    expect(gap.payload).toMatchObject({ requestedSince: hugeSeq - 1, oldestAvailableSeq: hugeSeq + 1 });
    c.ws.close();
  });
});
