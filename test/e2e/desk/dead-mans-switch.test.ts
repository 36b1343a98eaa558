// The dead man's switch (docs/trading.md "Dead man's switch") against the reference engine: the
// client arms it with signed cancels of its open orders; the socket cut → every order cancelled
// within timeout + 2 s; a reconnect before the timeout keeps them; the replica that held the
// connection SIGKILLed → the other replica on the same Redis fires it; it refuses what is not a
// cancel the party's session signed, and a connection that does not hold the party.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { closedPort, fleetServices, REDIS_URL, startReplica, stopReplicas, uniqueName, waitFor, type Replica } from '../../support/fleet.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import {
  deadMansSwitch,
  GatewayError,
  placeOrders,
  requestMessage,
  StreamClient,
  UserOrdersStore,
  type OrderRequest,
  type WebSocketCtor,
} from '../../../packages/client/src/index.js';

const bid = (price: string): OrderRequest => ({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price });

const openCount = async (engine: RunningEngine, party: string): Promise<number> => (await engineOpenOrders(engine, party)).length;

/** A trader on `url` with a session, collateral, a stream holding its party and its user channel's store. */
async function trader(url: string, engine: RunningEngine, hint: string) {
  const client = await deskTrader(url, engine, hint);
  const signer = { party: client.session!.party };
  const store = new UserOrdersStore();
  const stream = new StreamClient({
    client,
    kinds: ['order.update'],
    party: [signer.party],
    WebSocket: WebSocket as unknown as WebSocketCtor,
    reconnect: { baseDelayMs: 50, maxDelayMs: 200 },
    onMessage: (m) => {
      if (m.source === 'live' && m.frame.kind === 'order.update') store.apply(m.frame);
    },
  });
  stream.start();
  return { party: signer.party, client, store, stream };
}

/** At most 16 switches per party: the 17th name refused, a held name re-armed, a freed name armed again. */
async function boundHolds(t: Awaited<ReturnType<typeof trader>>): Promise<void> {
  const session = t.client.session!;
  const arm = (name: string) => t.stream.ask('switch.arm', { party: t.party, sessionId: session.sessionId, name, timeoutMs: 30_000, cancels: [] }).catch((e: unknown) => e as GatewayError);
  for (let i = 0; i < 16; i++) expect(await arm(`s${i}`)).toMatchObject({ name: `s${i}` });
  expect(await arm('s16')).toMatchObject({ status: 400, code: 'too_many_switches' });
  expect(await arm('s3')).toMatchObject({ name: 's3' }); // re-arming a held name
  expect(await t.stream.ask('switch.disarm', { party: t.party, name: 's0' })).toEqual({ name: 's0', disarmed: true });
  expect(await arm('s16')).toMatchObject({ name: 's16' });
  for (let i = 1; i <= 16; i++) await t.stream.ask('switch.disarm', { party: t.party, name: `s${i}` });
}

describe('dead man\'s switch (one gateway)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
  });

  it('the socket cut: every order is cancelled within timeout + 2 s', async () => {
    const t = await trader(gw.url, engine, 'cut');
    await placeOrders(t.client, Array.from({ length: 8 }, (_, i) => bid(String(50_000 + i))));
    await waitFor(() => t.store.open().length === 8, 5_000, 'the store knows the orders');
    const timeoutMs = 2_000;
    const sw = await deadMansSwitch({ client: t.client, stream: t.stream, timeoutMs, orders: () => t.store.open() });
    expect(sw.armed).toMatchObject({ name: 'default', cancels: 8, timeoutMs });
    // Placed through the switch: covered at once.
    const ninth = await sw.place(bid('50100'));
    expect(ninth).toMatchObject({ ok: true, status: 'open' });
    expect(sw.armed!.cancels).toBe(9);
    expect(await openCount(engine, t.party)).toBe(9);
    // The process "dies": no more refreshes, the socket closes.
    sw.stop();
    const cutAt = Date.now();
    t.stream.stop();
    await waitFor(async () => (await openCount(engine, t.party)) === 0, timeoutMs + 2_000, 'every order cancelled');
    expect(Date.now() - cutAt).toBeLessThanOrEqual(timeoutMs + 2_000);
    const m = await (await fetch(`${gw.url}/metrics`)).text();
    expect(m).toMatch(/bff_switch_cancels_total\{outcome="cancelled"\} 9/);
  });

  it('a reconnect before the timeout keeps the orders', async () => {
    const t = await trader(gw.url, engine, 'keep');
    await placeOrders(t.client, Array.from({ length: 3 }, (_, i) => bid(String(51_000 + i))));
    await waitFor(() => t.store.open().length === 3, 5_000, 'known');
    const timeoutMs = 2_000;
    const sw = await deadMansSwitch({ client: t.client, stream: t.stream, timeoutMs, orders: () => t.store.open(), heartbeatMs: 400 });
    t.stream.reconnectNow(); // the connection drops; the client reconnects at once and heartbeats on
    await new Promise((r) => setTimeout(r, timeoutMs * 2));
    expect(await openCount(engine, t.party)).toBe(3);
    await sw.disarm();
    t.stream.stop();
    await new Promise((r) => setTimeout(r, timeoutMs + 1_000));
    expect(await openCount(engine, t.party)).toBe(3); // disarmed: nothing fired
  });

  it('refuses what it could not honestly hold', async () => {
    const t = await trader(gw.url, engine, 'refuse');
    const other = await trader(gw.url, engine, 'other');
    try {
      const session = t.client.session!;
      const ts = Date.now() + 20_000;
      const cancelSig = `${ts}.${await session.signature(requestMessage('DELETE', '/v1/orders/o-1', ts, ''))}`;
      const arm = (s: StreamClient, fields: Record<string, unknown>) =>
        s.ask('switch.arm', { party: t.party, sessionId: session.sessionId, timeoutMs: 2_000, cancels: [{ orderId: 'o-1', sig: cancelSig }], ...fields }).catch((e: unknown) => e as GatewayError);
      // A connection that does not hold the party.
      expect(await arm(other.stream, {})).toMatchObject({ status: 403, code: 'forbidden' });
      // A signature over anything but that cancel (here: a place) is no cancel.
      const placeSig = `${ts}.${await session.signature(requestMessage('POST', '/v1/orders', ts, JSON.stringify(bid('1'))))}`;
      expect(await arm(t.stream, { cancels: [{ orderId: 'o-1', sig: placeSig }] })).toMatchObject({ status: 401, code: 'unauthorized' });
      // Outside the window (40 s ahead), a timeout out of bounds.
      const far = Date.now() + 40_000;
      const farSig = `${far}.${await session.signature(requestMessage('DELETE', '/v1/orders/o-1', far, ''))}`;
      expect(await arm(t.stream, { cancels: [{ orderId: 'o-1', sig: farSig }] })).toMatchObject({ status: 401 });
      expect(await arm(t.stream, { timeoutMs: 60_000 })).toMatchObject({ status: 400, code: 'bad_request' });
      expect(await t.stream.ask('switch.heartbeat', { party: t.party, name: 'nope' }).catch((e: unknown) => e)).toMatchObject({ status: 404 });
      // A good arm, then a disarm.
      expect(await arm(t.stream, {})).toMatchObject({ name: 'default', cancels: 1, timeoutMs: 2_000 });
      expect(await t.stream.ask('switch.disarm', { party: t.party })).toEqual({ name: 'default', disarmed: true });
    } finally {
      t.stream.stop();
      other.stream.stop();
    }
  });

  it('a party holds at most 16 switches: another name is refused, re-arming a held one is not', async () => {
    // Names are the party's to choose: without a bound, one party could hold any number of
    // switches (each up to 200 signed cancels) for as long as the address budget allowed.
    const t = await trader(gw.url, engine, 'many');
    try {
      await boundHolds(t);
    } finally {
      t.stream.stop();
    }
  });
});

describe('dead man\'s switch across replicas (two gateways, one Redis)', async () => {
  const ok = await fleetServices({ redis: true });
  it.skipIf(!ok)('the bound of 16 switches per party holds in Redis', async (ctx) => {
    const engine = await testEngine(ctx);
    const gw = await testLiveGateway(ctx, engine, { REDIS_URL, REDIS_PREFIX: `${uniqueName('dmsbound')}:`, RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    const t = await trader(gw.url, engine, 'bound');
    try {
      await boundHolds(t);
    } finally {
      t.stream.stop();
    }
  });

  it.skipIf(!ok)('the replica holding the connection SIGKILLed: the other fires it', { timeout: 120_000 }, async (ctx) => {
    const engine = await testEngine(ctx);
    const prefix = `${uniqueName('dms')}:`;
    const replicas: Replica[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const port = await closedPort();
        replicas.push(
          await startReplica(port, {
            ...process.env,
            PORT: String(port),
            HOST: '127.0.0.1',
            LOG_LEVEL: 'warn',
            DATABASE_URL: '',
            ENGINE_BASE_URL: engine.url,
            ENGINE_ADMIN_TOKEN: engine.adminToken,
            REDIS_URL,
            REDIS_PREFIX: prefix,
            RATE_LIMIT_MAX: '100000',
            RATE_LIMIT_IP_MAX: '100000',
          }),
        );
      }
      const [a] = replicas as [Replica, Replica];
      const t = await trader(`http://127.0.0.1:${a.port}`, engine, 'fleet');
      await placeOrders(t.client, Array.from({ length: 6 }, (_, i) => bid(String(52_000 + i))));
      await waitFor(() => t.store.open().length === 6, 10_000, 'known');
      const timeoutMs = 2_000;
      const sw = await deadMansSwitch({ client: t.client, stream: t.stream, timeoutMs, orders: () => t.store.open() });
      expect(sw.armed!.cancels).toBe(6);
      sw.stop();
      t.stream.stop();
      const killedAt = Date.now();
      a.proc.kill('SIGKILL');
      await a.exited;
      await waitFor(async () => (await openCount(engine, t.party)) === 0, timeoutMs + 2_000, 'every order cancelled by the surviving replica');
      expect(Date.now() - killedAt).toBeLessThanOrEqual(timeoutMs + 2_000);
    } finally {
      await stopReplicas(replicas.filter((r) => r.proc.exitCode === null && r.proc.signalCode === null));
    }
  });
});
