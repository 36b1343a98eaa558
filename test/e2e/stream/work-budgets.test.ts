// Budgets per client address for the work a stream message or upgrade triggers (issue 29): session
// lookups of party proofs (SESSION_LOOKUPS_PER_IP) and user channel snapshot reads
// (SNAPSHOT_READS_PER_IP), charged before the work and refused past the budget with 429 /
// stream.error `budget_exhausted`; and identical concurrent snapshot reads shared (one engine read
// for many connections asking the same party's orders). Real WebSocket clients, a gateway on the
// reference engine (through a pass-through proxy that counts and can hold the engine's admin reads)
// and on PostgreSQL.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fundedClient, signHex, type SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, refused, type Msg, type TestClient } from '../../integration/stream/helpers.js';
import type { LiveRuntime } from '../../../src/live.js';
import { fleetServices, forgetFleetState, REDIS_URL, uniqueName } from '../../support/fleet.js';

type Answer = Msg & { id: unknown };

async function ask(c: TestClient, message: Record<string, unknown>, timeoutMs = 5_000): Promise<Answer> {
  const before = c.messages.length;
  c.ws.send(JSON.stringify(message));
  const mine = (m: Msg) => (m.kind === 'stream.ack' || m.kind === 'stream.error') && (m as Answer).id === message.id;
  await c.waitFor((ms) => ms.slice(before).some(mine), timeoutMs);
  return c.messages.slice(before).find(mine) as Answer;
}

/** A proof naming a session nobody made: well formed, fresh, so it reaches the session store. */
function randomProof(party: string): { user: string; sessionId: string; sig: string } {
  return { user: party, sessionId: `s-${randomBytes(8).toString('hex')}`, sig: `${Date.now()}.${randomBytes(64).toString('hex')}` };
}

describe('work budgets per client address', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let proxy: http.Server;
  let gw: TestGateway;
  let alice: SigningClient;
  /** The engine's admin reads of a party's live orders (user snapshots), counted; held while `stall`. */
  let orderReads = 0;
  let stall = false;
  const stalled: Array<() => void> = [];

  // Closed after the afterAll below (registered later, run first), last started first: the gateway,
  // the proxy, the engine, the database.
  const file = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
    engine = await testEngine(file);
    const target = new URL(engine.url);
    proxy = http.createServer((req, res) => {
      const forward = () => {
        const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        req.pipe(up);
      };
      if (req.url?.startsWith('/v1/admin/users/')) {
        orderReads++;
        if (stall) return void stalled.push(forward);
      }
      forward();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    file.onTestFinished(() => proxy.close());
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    gw = await testGateway(
      file,
      { ENGINE_BASE_URL: proxyUrl, ENGINE_ADMIN_TOKEN: engine.adminToken, DATABASE_URL: db.url, SESSION_LOOKUPS_PER_IP: '5', SNAPSHOT_READS_PER_IP: '60', WS_ORDERBOOK_POLL_MS: '60000' },
      { listen: true },
    );
    await (gw.deps.live as LiveRuntime).start();
    await waitFor(() => (gw.deps.live as LiveRuntime).status().connected, 5_000, 'bridge');
    alice = await fundedClient(gw.url, engine.adminToken, '1000', 'alice', engine.url);
    await waitFor(() => gw.deps.sessions.peek(alice.sessionId) !== undefined, 5_000, 'session learnt');
  }, 60_000);
  afterAll(() => {
    for (const f of stalled.splice(0)) f();
  });

  const goodProof = () => {
    const ts = alice.nextTs();
    return { user: alice.id, sessionId: alice.sessionId, sig: `${ts}.${signHex(alice.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}` };
  };

  it('proofs of unknown sessions: 5 database lookups per address, then budget_exhausted (socket, upgrade and signed REST reads alike); known sessions are not charged', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const codes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const a = await ask(c, { op: 'subscribe', id: `r${i}`, party: [alice.id], ...randomProof(alice.id) });
      codes.push(String(a.payload.code));
      if (a.payload.code === 'budget_exhausted') expect(a.payload).toMatchObject({ status: 429, budget: 'session_lookups' });
    }
    expect(codes).toEqual([...Array(5).fill('unauthorized'), ...Array(3).fill('budget_exhausted')]);
    // An upgrade proving a random session: the same budget, 429 before the handshake.
    const q = new URLSearchParams({ kinds: 'trade', party: alice.id, ...randomProof(alice.id) });
    const upgrade = await refused(gw.url, q.toString());
    expect([upgrade.status, upgrade.body.code, upgrade.body.budget]).toEqual([429, 'budget_exhausted', 'session_lookups']);
    // A signed REST read of a party route proving a random session: the same address's budget.
    const path = `/v1/users/${alice.id}/fills`;
    const rest = await fetch(`${gw.url}${path}`, { headers: { 'x-user': alice.id, 'x-session-id': `s-${randomBytes(8).toString('hex')}`, 'x-session-sig': `${Date.now()}.${randomBytes(64).toString('hex')}` } });
    expect([rest.status, ((await rest.json()) as { code: string }).code]).toEqual([429, 'budget_exhausted']);
    // A session this gateway holds costs no lookup: still proven.
    expect(await ask(c, { op: 'subscribe', id: 'known', party: [alice.id], ...goodProof() })).toMatchObject({ kind: 'stream.ack' });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('identical concurrent snapshot reads are shared: 20 connections asking alice\'s orders at once cost the engine 2 reads', { timeout: 30_000 }, async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => connect(gw.url, 'kinds=trade')));
    // Each proves alice first (no snapshot of user channels yet: kinds has none).
    await Promise.all(clients.map((c, i) => ask(c, { op: 'subscribe', id: `p${i}`, party: [alice.id], ...goodProof(), snapshot: false })));
    stall = true;
    const before = orderReads;
    for (const [i, c] of clients.entries()) c.ws.send(JSON.stringify({ op: 'subscribe', id: `o${i}`, kinds: ['order.update'] }));
    await waitFor(() => orderReads > before, 5_000, 'the first read');
    // A bounded wait, kept: the other 19 reach the gateway and join the held read, which nothing
    // outside the gateway can see (the read is held, so no answer comes to wait for).
    await new Promise((r) => setTimeout(r, 300));
    stall = false;
    for (const f of stalled.splice(0)) f();
    await Promise.all(clients.map((c, i) => c.waitFor((ms) => ms.some((m) => (m as Answer).id === `o${i}`), 10_000)));
    expect(orderReads - before).toBeLessThanOrEqual(2);
    for (const c of clients) c.ws.close();
  });

  it('snapshot reads: charged per party and channel, refused whole past the budget (budget_exhausted), and the connection goes on', { timeout: 30_000 }, async () => {
    // The budget (60) was partly spent by the test above (20 reads): 40 left, 2 per subscribe of both channels for one party.
    const c = await connect(gw.url, 'kinds=trade');
    expect(await ask(c, { op: 'subscribe', id: 'prove', party: [alice.id], ...goodProof(), snapshot: false })).toMatchObject({ kind: 'stream.ack' });
    const answers: string[] = [];
    for (let i = 0; i < 22; i++) {
      // A subscribe with a snapshot reads every held party's channels again, even ones already held: charged each time.
      const a = await ask(c, { op: 'subscribe', id: `s${i}`, kinds: ['order.update', 'fill'] });
      answers.push(a.kind === 'stream.ack' ? 'ack' : String(a.payload.code));
    }
    expect(answers).toEqual([...Array(20).fill('ack'), 'budget_exhausted', 'budget_exhausted']);
    const refusal = c.messages.find((m) => m.kind === 'stream.error' && m.payload.code === 'budget_exhausted')!;
    expect(refusal.payload).toMatchObject({ status: 429, budget: 'snapshot_reads' });
    expect(refusal.payload.retryAfterS).toBeGreaterThan(0);
    // Without a snapshot the same subscribe costs nothing and is taken.
    expect(await ask(c, { op: 'subscribe', id: 'plain', kinds: ['order.update'], snapshot: false })).toMatchObject({ kind: 'stream.ack' });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });
});

const redisUp = await fleetServices({ redis: true });

describe.skipIf(!redisUp)('work budgets in a fleet (REDIS_URL)', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  const gateways: TestGateway[] = [];
  const prefix = `${uniqueName('budget')}:`;

  // Closed last started first: the gateways, the engine, the database, then the fleet's state forgotten.
  const file = fileScope();
  beforeAll(async () => {
    file.onTestFinished(() => forgetFleetState(`${prefix}NONE`, prefix));
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
    engine = await testEngine(file);
    for (let i = 0; i < 2; i++) {
      gateways.push(
        await testGateway(
          file,
          { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, DATABASE_URL: db.url, REDIS_URL, REDIS_PREFIX: prefix, SESSION_LOOKUPS_PER_IP: '4' },
          { listen: true },
        ),
      );
    }
    await Promise.all(gateways.map((g) => (g.deps.live as LiveRuntime).start()));
  }, 60_000);

  it('one address has one budget across the replicas', { timeout: 30_000 }, async () => {
    const party = `mallory::${'a'.repeat(64)}`;
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const gw = gateways[i % 2]!;
      const res = await fetch(`${gw.url}/v1/stream?${new URLSearchParams({ kinds: 'trade', party, ...randomProof(party) })}`);
      codes.push(((await res.json()) as { code: string }).code);
    }
    expect(codes).toEqual(['unauthorized', 'unauthorized', 'unauthorized', 'unauthorized', 'budget_exhausted', 'budget_exhausted']);
  });
});
