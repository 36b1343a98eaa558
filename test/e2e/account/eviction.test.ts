// How long the live account book keeps a party complete (docs/account.md "How long a party
// stays", ADR 0082), against the reference engine over real HTTP and WebSocket, with the indexer
// writing PostgreSQL: a gateway keeping one party for reads alone (ACCOUNT_READ_PARTIES_MAX=1) and
// a short idle time.
//   - a party read by REST is evicted when another is read (the cap) or when idle; events of the
//     evicted party go on (fills of its resting order, new orders, a cancel, a deposit, a mark
//     move); its next read is seeded again and is exactly a fresh gateway's answer (the database
//     seed alone) and the engine's own account;
//   - for random order sequences of two parties read in turn (each read evicts the other, whose
//     events went on meanwhile), every read equals the engine's account and the database seed's;
//   - a party a stream connection asks account.update for stays complete whatever is read, while
//     the connection holds it (from its URL or a subscribe message), and is let go after an
//     unsubscribe or the close; the gauge bff_account_parties counts them.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { faucet, makeParty, signHex, SigningClient } from '../../sandbox/engine/helpers.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, type Msg, type TestClient } from '../../integration/stream/helpers.js';
import type { LiveRuntime } from '../../../src/live.js';
import { accountFromDatabase } from '../../../src/stream/account-book.js';
import { formatDecimal } from '../../../src/decimal.js';
import { syncedAccount } from '../../support/account.js';

// One market per test: the book one leaves does not match the next one's orders.
const MARKET = 'BTC-PERP';
const IDLE_MS = 600;

interface Account {
  asOfSeq: number;
  collateral: string;
  freeCollateral: string;
  positions: Array<{ market: string; size: string; positionId: string; markPrice: string }>;
  orders: Array<{ orderId: string; remaining: string }>;
}

describe('account book eviction against the reference engine', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  let gw: TestGateway;
  let live: LiveRuntime;
  let n = 0;

  const client = async (name: string): Promise<SigningClient> => {
    const c = new SigningClient(gw.url, makeParty(`${name}${n++}`));
    expect((await c.authorize()).body.ok).toBe(true);
    expect((await faucet(engine.url, engine.adminToken, c.id, '5000')).body.ok).toBe(true);
    return c;
  };

  /** The REST account once it reflects the engine's head. */
  const synced = (c: SigningClient): Promise<Account> => syncedAccount<Account>(c, () => engine.engine.log.maxSeq);

  /** The live answer equals a fresh gateway's (the database seed alone, once the indexer has everything) and the engine's. */
  async function asFresh(c: SigningClient, account: Account): Promise<void> {
    await indexer.waitFor(engine.engine.log.maxSeq, 10_000);
    const fresh = await accountFromDatabase(gw.deps.db, c.id);
    expect({ ...account, asOfSeq: 0 }, JSON.stringify({ live: account, fresh, head: engine.engine.log.maxSeq })).toEqual({ ...fresh, asOfSeq: 0 });
    expect(account.freeCollateral).toBe(formatDecimal(engine.engine.accounts.freeCollateral(c.id)));
    const me = await c.me();
    expect(account.collateral).toBe(me.body.balance);
    expect(account.orders.map((o) => o.orderId).sort()).toEqual(me.body.openOrders.map((o: { orderId: string }) => o.orderId).sort());
  }

  async function gauge(state: string): Promise<number> {
    const text = await gw.deps.metrics.registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`bff_account_parties{state="${state}"}`));
    return Number(line?.split(' ')[1]);
  }

  const proof = (c: SigningClient) => {
    const ts = c.nextTs();
    return { user: c.id, sessionId: c.sessionId, sig: `${ts}.${signHex(c.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}` };
  };

  async function ask(c: TestClient, message: Record<string, unknown>): Promise<Msg> {
    const before = c.messages.length;
    c.ws.send(JSON.stringify(message));
    const mine = (m: Msg) => (m as unknown as { id?: unknown }).id === message.id;
    await c.waitFor((ms) => ms.slice(before).some(mine), 10_000);
    return c.messages.slice(before).find(mine)!;
  }

  const stacks = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    engine = await testEngine(stacks);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
    gw = await startGateway(
      {
        DATABASE_URL: db.url,
        ENGINE_BASE_URL: engine.url,
        ENGINE_ADMIN_TOKEN: engine.adminToken,
        RATE_LIMIT_MAX: '1000000',
        ACCOUNT_READ_PARTIES_MAX: '1',
        ACCOUNT_IDLE_MS: String(IDLE_MS),
      },
      { listen: true },
    );
    live = gw.deps.live as LiveRuntime;
    await live.start();
    await waitFor(() => live.status().connected, 5_000, 'bridge');
    await waitFor(() => live.knownMarkets() !== null, 5_000, 'market list');
  });
  afterAll(async () => {
    await gw?.close();
    await indexer?.close();
    await db?.drop();
  });

  it('a party evicted while its events go on is seeded again on its next read: the same account as a fresh gateway', { timeout: 60_000 }, async () => {
    const [a, b, other] = [await client('a'), await client('b'), await client('o')];
    // A: a long from a fill, a partly filled resting bid, a second resting bid.
    expect((await other.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.02', price: '60000' })).body.ok).toBe(true);
    expect((await a.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.02', price: '60000' })).body.status).toBe('filled');
    const bid = await a.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.05', price: '59000' });
    expect(bid.body.status).toBe('open');
    const second = await a.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price: '58000' });
    expect(second.body.status).toBe('open');
    const first = await synced(a);
    expect(live.queries.accounts!.isComplete(a.id)).toBe(true);
    await asFresh(a, first);

    // B is read: the cap (one party for reads alone) evicts A.
    await synced(b);
    expect(live.queries.accounts!.isComplete(a.id)).toBe(false);
    expect(live.queries.accounts!.isComplete(b.id)).toBe(true);
    expect(await gauge('complete')).toBe(1);
    expect(await gw.deps.metrics.registry.getSingleMetricAsString('bff_account_evictions_total')).toMatch(/bff_account_evictions_total [1-9]/);

    // A's history goes on while it is evicted: a maker fill of its resting bid, a new order, a
    // cancel, a deposit, and a match between others that moves the mark.
    expect((await other.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.015', price: '59000' })).body.ok).toBe(true);
    expect((await a.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.01', price: '61000' })).body.status).toBe('open');
    expect((await a.cancel(second.body.orderId)).body.ok).toBe(true);
    expect((await faucet(engine.url, engine.adminToken, a.id, '12.5')).body.ok).toBe(true);
    expect((await other.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.004', price: '59500' })).body.ok).toBe(true);
    expect((await b.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.004', price: '59500' })).body.status).toBe('filled');

    const again = await synced(a);
    expect(live.queries.accounts!.isComplete(a.id)).toBe(true);
    expect(live.queries.accounts!.isComplete(b.id)).toBe(false); // A's read evicted B in turn
    expect(again.positions).toMatchObject([{ market: MARKET, size: '0.0350000000', markPrice: '59500.0000000000' }]);
    expect(again.orders.map((o) => o.remaining)).toEqual(['0.0350000000', '0.0100000000']);
    await asFresh(a, again);

    // Idle: evicted by the sweep without any other read.
    await waitFor(() => !live.queries.accounts!.isComplete(a.id), IDLE_MS * 10, 'idle eviction');
    expect(await gauge('complete')).toBe(0);
    await asFresh(a, await synced(a));
  });

  it('two parties read in turn, each read evicting the other while random orders go on: every read is the engine\'s and the seed\'s account', { timeout: 120_000 }, async () => {
    const Price = fc.constantFrom('59000', '59500', '60000', '60500');
    const Size = fc.constantFrom('0.005', '0.01', '0.05', '0.1');
    const Command = fc.oneof(
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('place' as const), who: fc.nat(1), side: fc.constantFrom('buy' as const, 'sell' as const), price: Price, size: Size, tif: fc.constantFrom('gtc', 'gtc', 'ioc') }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), who: fc.nat(1), index: fc.nat(5) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('deposit' as const), who: fc.nat(1), amount: fc.constantFrom('50', '300.25') }) },
    );
    let reseeded = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(Command, { minLength: 4, maxLength: 10 }), async (commands) => {
        const parties = [await client('pa'), await client('pb')];
        const open: string[][] = [[], []];
        for (const cmd of commands) {
          const c = parties[cmd.who]!;
          if (cmd.kind === 'place') {
            const r = await c.placeOrder({ market: 'ETH-PERP', side: cmd.side, type: 'limit', size: cmd.size, price: cmd.price, tif: cmd.tif });
            if (r.body.ok && r.body.status === 'open') open[cmd.who]!.push(r.body.orderId);
          } else if (cmd.kind === 'cancel') {
            const id = open[cmd.who]![cmd.index % Math.max(1, open[cmd.who]!.length)];
            if (id) await c.cancel(id); // may have filled meanwhile: the engine's answer is not the point
          } else {
            expect((await faucet(engine.url, engine.adminToken, c.id, cmd.amount)).body.ok).toBe(true);
          }
          // Read the other party first, then this one: the cap of one evicts each in turn.
          for (const p of [parties[1 - cmd.who]!, c]) {
            if (!live.queries.accounts!.isComplete(p.id)) reseeded++;
            const account = await synced(p);
            expect(live.queries.accounts!.isComplete(parties[0]!.id) && live.queries.accounts!.isComplete(parties[1]!.id)).toBe(false);
            await asFresh(p, account);
          }
        }
      }),
      { numRuns: 10 },
    );
    expect(reseeded).toBeGreaterThan(20);
  });

  it('a party a connection asks account.update for stays complete while it does (URL or subscribe), and is let go after', { timeout: 60_000 }, async () => {
    const [a, b, other] = [await client('sa'), await client('sb'), await client('so')];
    const { user, sessionId, sig } = proof(a);
    const ws = await connect(gw.url, `party=${a.id}&user=${user}&sessionId=${sessionId}&sig=${sig}&kinds=account.update`);
    try {
      await ws.waitFor((ms) => ms.some((m) => m.kind === 'account.update' && m.snapshot === true));
      expect(await gauge('held')).toBe(1);
      // Reads of others and idle time do not evict it.
      await synced(b);
      await synced(other);
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 2));
      expect(live.queries.accounts!.isComplete(a.id)).toBe(true);
      // Its changes keep coming as frames (only a complete party has them).
      expect((await faucet(engine.url, engine.adminToken, a.id, '1.25')).body.ok).toBe(true);
      await ws.waitFor((ms) => ms.some((m) => m.kind === 'account.update' && m.payload.collateral === '5001.2500000000'));

      // Unsubscribed: kept as a fresh read (then the cap or the idle time lets it go).
      const un = await ask(ws, { op: 'unsubscribe', id: 'u1', kinds: ['account.update'] });
      expect(un.kind).toBe('stream.ack');
      expect(await gauge('held')).toBe(0);
      await synced(b);
      expect(live.queries.accounts!.isComplete(a.id)).toBe(false);

      // Events while evicted, then a subscribe message holds it again: its snapshot is the seeded account.
      expect((await other.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'limit', size: '1', price: '150' })).body.ok).toBe(true);
      expect((await a.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'limit', size: '1', price: '150' })).body.status).toBe('filled');
      const before = ws.messages.length;
      const sub = await ask(ws, { op: 'subscribe', id: 's1', kinds: ['account.update'] });
      expect(sub.kind).toBe('stream.ack');
      expect(await gauge('held')).toBe(1);
      await ws.waitFor((ms) => ms.slice(before).some((m) => m.kind === 'account.update' && m.snapshot === true));
      const snap = ws.messages.slice(before).find((m) => m.kind === 'account.update' && m.snapshot === true)!;
      expect(snap.payload.positions).toMatchObject([{ market: 'SOL-PERP', size: '1.0000000000' }]);
      const read = await synced(a);
      expect({ ...snap.payload, asOfSeq: 0 }).toEqual({ ...read, asOfSeq: 0 });
      await asFresh(a, read);
      await synced(b);
      expect(live.queries.accounts!.isComplete(a.id)).toBe(true);
    } finally {
      ws.ws.close();
      await ws.closed;
    }
    // Closed: released, kept as just read, evicted by the next read of another party.
    await waitFor(() => live.hub.size === 0, 5_000, 'released on close');
    expect(await gauge('held')).toBe(0);
    await synced(b);
    expect(live.queries.accounts!.isComplete(a.id)).toBe(false);
    expect(ws.schemaErrors).toEqual([]);
  });
});
