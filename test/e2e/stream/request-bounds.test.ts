// Every request a stream connection sends waits in a counted queue (docs/stream.md "Talking to the
// socket"): the dead man's switch calls and order.status lookups too, not only orders and
// subscription changes. Their store (Redis for a fleet) is stalled here by a pass-through TCP proxy
// in front of the machine's Redis: before the bound, every message of a client that kept sending
// waited for it (a promise and an answer each, without end); now past 32 of a kind waiting, one is
// refused at once with rate_limited, and the connection's other requests are not held by them.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { fundedClient, signHex, type SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { fleetServices, REDIS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { connect, type Msg, type TestClient } from '../../integration/stream/helpers.js';
import { MAX_PENDING_LOOKUPS, MAX_PENDING_SWITCH_CALLS } from '../../../src/http/stream-messages.js';

type Answer = Msg & { id: unknown; op: unknown };
const isAnswer = (m: Msg): boolean => m.kind === 'stream.ack' || m.kind === 'stream.error' || m.kind === 'stream.answer';
const answersTo = (c: TestClient, prefix: string): Answer[] => c.messages.filter((m) => isAnswer(m) && String((m as Answer).id).startsWith(prefix)) as Answer[];

async function ask(c: TestClient, message: Record<string, unknown>, timeoutMs = 10_000): Promise<Answer> {
  c.ws.send(JSON.stringify(message));
  const mine = (m: Msg) => isAnswer(m) && (m as Answer).id === message.id;
  await c.waitFor((ms) => ms.some(mine), timeoutMs);
  return c.messages.find(mine) as Answer;
}

/** A TCP pass-through to Redis that can hold what the gateway sends (a stalled Redis, the machine's own left running). */
async function stallableProxy(target: URL): Promise<{ url: string; stall(on: boolean): void; close(): void }> {
  let stalled = false;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((down) => {
    const up = net.connect(Number(target.port), target.hostname);
    sockets.add(down).add(up);
    down.on('data', (chunk: Buffer) => (stalled ? held.push(() => up.write(chunk)) : up.write(chunk)));
    up.on('data', (chunk: Buffer) => down.write(chunk));
    for (const [a, b] of [[down, up], [up, down]] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    stall(on) {
      stalled = on;
      if (!on) for (const write of held.splice(0)) write();
    },
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

const redis = await fleetServices({ redis: true });

describe.skipIf(!redis)('switch calls and order.status wait in counted queues', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof stallableProxy>>;
  let alice: SigningClient;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    proxy = await stallableProxy(new URL(REDIS_URL));
    stacks.onTestFinished(() => proxy.close());
    gw = await testLiveGateway(stacks, engine, {
      REDIS_URL: proxy.url,
      REDIS_PREFIX: `${uniqueName('bounds')}:`,
      RATE_LIMIT_MAX: '100000',
      RATE_LIMIT_IP_MAX: '100000',
      // Room for the burst below: what is judged is how many wait, not the message rate.
      WS_CLIENT_MESSAGE_BURST: '1000',
      WS_ADDRESS_MESSAGES_PER_S: '0',
    });
    alice = await fundedClient(gw.url, engine.adminToken, '1000', 'alice', engine.url);
    await waitFor(() => gw.deps.sessions.peek(alice.sessionId) !== undefined, 5_000, 'session learnt');
  });
  afterAll(() => {
    proxy?.stall(false);
  });

  it('past 32 of a kind waiting, one is refused at once (rate_limited, retryAfterS); after the stall they answer again', { timeout: 60_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const ts = alice.nextTs();
    const proof = { user: alice.id, sessionId: alice.sessionId, sig: `${ts}.${signHex(alice.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}` };
    expect(await ask(c, { op: 'subscribe', id: 'party', party: [alice.id], ...proof })).toMatchObject({ kind: 'stream.ack' });
    const arm = { op: 'switch.arm', party: alice.id, sessionId: alice.sessionId, name: 'hb', timeoutMs: 30_000, cancels: [] };
    expect(await ask(c, { ...arm, id: 'arm' })).toMatchObject({ kind: 'stream.answer', payload: { status: 200 } });

    proxy.stall(true);
    const sent = 40;
    for (let i = 0; i < sent; i++) c.ws.send(JSON.stringify({ op: 'switch.heartbeat', id: `hb-${i}`, party: alice.id, name: 'hb' }));
    for (let i = 0; i < sent; i++) c.ws.send(JSON.stringify({ op: 'order.status', id: `st-${i}`, party: alice.id, clientOrderId: `nope-${i}` }));
    // The refusals come at once, while the first 32 of each kind still wait for the stalled store.
    await c.waitFor((ms) => ms.filter((m) => m.kind === 'stream.error' && (m.payload as { code?: string }).code === 'rate_limited').length >= 2 * (sent - 32), 5_000);
    for (const [prefix, max] of [['hb-', MAX_PENDING_SWITCH_CALLS], ['st-', MAX_PENDING_LOOKUPS]] as const) {
      const refused = answersTo(c, prefix).filter((m) => m.kind === 'stream.error' && m.payload.code === 'rate_limited');
      expect(refused.map((m) => m.id)).toEqual(Array.from({ length: sent - max }, (_, i) => `${prefix}${max + i}`));
      for (const r of refused) expect(r.payload).toMatchObject({ status: 429, retryAfterS: 1 });
    }

    // The store answers again: every request that was taken is answered (whatever the stall made
    // of it), and the connection's switch calls and lookups pass again.
    proxy.stall(false);
    await c.waitFor((ms) => ms.filter((m) => isAnswer(m) && /^(hb|st)-/.test(String((m as Answer).id))).length === 2 * sent, 15_000);
    await waitFor(async () => (await ask(c, { op: 'switch.heartbeat', id: `again-${Date.now()}`, party: alice.id, name: 'hb' })).kind === 'stream.answer', 10_000, 'a heartbeat answered');
    expect(await ask(c, { op: 'order.status', id: 'status-after', party: alice.id, clientOrderId: 'never' })).toMatchObject({ kind: 'stream.error', payload: { code: 'not_found', status: 404 } });
    expect(await ask(c, { op: 'switch.disarm', id: 'disarm', party: alice.id, name: 'hb' })).toMatchObject({ kind: 'stream.answer', payload: { body: { disarmed: true } } });
    c.ws.close();
  });
});
