// The account view (GET /v1/users/:party/account) against the reference engine over real HTTP:
// reference engine → indexer → PostgreSQL, and the gateway's live stream. For random order
// sequences (limit orders of both sides and tifs, reduce-only, cancels, deposits, withdrawals),
// after every step:
//   - the collateral equals the engine's own user snapshot (GET /v1/user/me through the gateway),
//     and the positions and open orders are the snapshot's;
//   - the free collateral is the engine's own (its margin arithmetic, read in process);
//   - a gateway that has just started (the database seed alone) gives the same account;
//   - an order the view says fits is accepted, one it says does not fit is refused with
//     insufficient_margin (and reduce-only / minimum-notional refusals are predicted too).
// A party with history from before the gateway started is served from the database seed.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { eventually } from '../../support/eventually.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import WebSocket from 'ws';
import { faucet, makeParty, signHex, SigningClient } from '../../sandbox/engine/helpers.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { LiveRuntime } from '../../../src/live.js';
import { accountFromDatabase } from '../../../src/stream/account-book.js';
import { GatewayClient, localParty, orderMargin } from '../../../packages/client/src/index.js';
import { divRound, formatDecimal, mulDecimal, parseDecimal } from '../../../src/decimal.js';
import { syncedAccount } from '../../support/account.js';

const MARKET = 'BTC-PERP';
const MAX_LEVERAGE = 20n;
const MIN_NOTIONAL = parseDecimal('10');

interface Account {
  asOfSeq: number;
  collateral: string;
  freeCollateral: string;
  positions: Array<{ market: string; size: string; positionId: string }>;
  orders: Array<{ orderId: string }>;
}

describe('account view against the reference engine', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  let gw: TestGateway;

  const client = (party = makeParty('acct')): SigningClient => new SigningClient(gw.url, party);

  /** The REST account once it reflects the engine's head. */
  const synced = (c: SigningClient): Promise<Account> => syncedAccount<Account>(c, () => engine.engine.log.maxSeq);

  /** The view agrees with the engine's own snapshot and margin arithmetic. */
  async function agrees(c: SigningClient): Promise<Account> {
    const account = await synced(c);
    const me = await c.me();
    expect(me.body.ok).toBe(true);
    expect(account.collateral).toBe(me.body.balance);
    expect(account.freeCollateral).toBe(formatDecimal(engine.engine.accounts.freeCollateral(c.id)));
    const sizes = (list: Array<{ positionId: string; size: string }>) => Object.fromEntries(list.map((p) => [p.positionId, p.size]));
    expect(sizes(account.positions)).toEqual(sizes(me.body.positions.filter((p: { status: string }) => p.status === 'open')));
    expect(account.orders.map((o) => o.orderId).sort()).toEqual(me.body.openOrders.map((o: { orderId: string }) => o.orderId).sort());
    return account;
  }

  const stacks = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    engine = await testEngine(stacks);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
  });
  afterAll(async () => {
    await gw?.close();
    await indexer?.close();
    await db?.drop();
  });

  it('serves a party whose history is older than the gateway from the database', async () => {
    // Before the gateway exists: a veteran with a partly filled resting order that both closes a
    // short and opens a long (the engine reserved margin for the opening part only), a deposit
    // after the last fill, and a withdrawal.
    const veteran = new SigningClient(engine.url, makeParty('veteran'));
    const other = new SigningClient(engine.url, makeParty('other'));
    for (const c of [veteran, other]) {
      expect((await c.authorize()).body.ok).toBe(true);
      expect((await faucet(engine.url, engine.adminToken, c.id, '2000')).body.ok).toBe(true);
    }
    expect((await other.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.02', price: '60000' })).body.ok).toBe(true);
    expect((await veteran.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.02', price: '60000' })).body.status).toBe('filled');
    expect((await veteran.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.05', price: '59000' })).body.status).toBe('open');
    expect((await other.placeOrder({ market: MARKET, side: 'sell', type: 'limit', size: '0.01', price: '59000' })).body.ok).toBe(true);
    expect((await faucet(engine.url, engine.adminToken, veteran.id, '125.5')).body.ok).toBe(true);
    expect((await veteran.withdraw('25')).body.ok).toBe(true);
    engine.engine.tick();
    await indexer.waitFor(engine.engine.log.maxSeq, 10_000);

    gw = await startGateway(
      { DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, RATE_LIMIT_MAX: '1000000' },
      { listen: true },
    );
    await (gw.deps.live as LiveRuntime).start();
    const c = new SigningClient(gw.url, veteran.party);
    expect((await c.authorize()).body.ok).toBe(true);
    const account = await agrees(c);
    // 0.01 of 0.05 filled; the position is short 0.01; the resting 0.04 closes 0.01 and opens 0.03.
    expect(account.positions).toMatchObject([{ market: MARKET, size: '-0.0100000000', markPrice: '59000.0000000000', markSource: 'last_trade' }]);
    expect(account).toMatchObject({ orders: [{ remaining: '0.0400000000', margin: formatDecimal(divRound(mulDecimal(parseDecimal('0.03'), parseDecimal('59000')), MAX_LEVERAGE)) }] });
    // The spec's /balance stays the last fill's new_balance; the account counts the deposit and withdrawal after it.
    const balance = await c.signed('GET', `/v1/users/${c.id}/balance`);
    expect(parseDecimal(account.collateral) - parseDecimal(balance.body.balance)).toBe(parseDecimal('100.5'));
    // Unauthenticated or another party: the guards of every party route.
    expect((await client().signed('GET', `/v1/users/${c.id}/account`)).status).toBe(401);
  });

  it('says which orders fit, as the engine decides, and keeps the collateral of the engine at every step', async () => {
    const Price = fc.constantFrom('58000', '59000', '59500', '60000', '60500', '61000');
    const Size = fc.constantFrom('0.001', '0.005', '0.01', '0.05', '0.1', '0.2', '0.4', '0.8');
    const Command = fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('place' as const), who: fc.nat(1), side: fc.constantFrom('buy' as const, 'sell' as const), price: Price, size: Size, tif: fc.constantFrom('gtc', 'gtc', 'ioc'), reduceOnly: fc.constantFrom(false, false, false, true) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), who: fc.nat(1), index: fc.nat(5) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('deposit' as const), who: fc.nat(1), amount: fc.constantFrom('50', '300.25') }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('withdraw' as const), who: fc.nat(1), amount: fc.constantFrom('100', '700', '1500') }) },
    );
    const decided = { fits: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(Command, { minLength: 6, maxLength: 14 }), async (commands) => {
        const parties = [client(makeParty('pa')), client(makeParty('pb'))];
        for (const c of parties) {
          expect((await c.authorize()).body.ok).toBe(true);
          expect((await faucet(engine.url, engine.adminToken, c.id, '1000')).body.ok).toBe(true);
        }
        for (const cmd of commands) {
          const c = parties[cmd.who]!;
          const before = await agrees(c);
          if (cmd.kind === 'place') {
            const position = parseDecimal(before.positions.find((p) => p.market === MARKET)?.size ?? '0');
            const closable = cmd.side === 'buy' ? (position < 0n ? -position : 0n) : position > 0n ? position : 0n;
            const size = parseDecimal(cmd.size);
            const opening = cmd.reduceOnly ? 0n : size > closable ? size - closable : 0n;
            const notional = mulDecimal(opening, parseDecimal(cmd.price));
            const required = divRound(notional, MAX_LEVERAGE);
            const expected =
              cmd.reduceOnly && (closable === 0n || size > closable)
                ? 'reduce_only_violation'
                : opening > 0n && notional < MIN_NOTIONAL
                  ? 'below_min_notional'
                  : opening > 0n && required > parseDecimal(before.freeCollateral)
                    ? 'insufficient_margin'
                    : 'accepted';
            const r = await c.placeOrder({ market: MARKET, side: cmd.side, type: 'limit', size: cmd.size, price: cmd.price, tif: cmd.tif, reduceOnly: cmd.reduceOnly });
            expect(r.status).toBe(200);
            expect(r.body.ok ? 'accepted' : r.body.code, JSON.stringify({ cmd, before })).toBe(expected);
            if (opening > 0n && expected === 'accepted') decided.fits++;
            if (expected === 'insufficient_margin') decided.refused++;
          } else if (cmd.kind === 'cancel') {
            const order = before.orders[cmd.index % Math.max(1, before.orders.length)];
            if (order) {
              const r = await c.cancel(order.orderId);
              expect(r.body.ok, r.text).toBe(true);
            }
          } else if (cmd.kind === 'deposit') {
            expect((await faucet(engine.url, engine.adminToken, c.id, cmd.amount)).body.ok).toBe(true);
          } else {
            // Withdrawals are the chain's business, not the gateway's: asked of the engine directly.
            const direct = new SigningClient(engine.url, c.party);
            direct.session = c.session;
            direct.sessionId = c.sessionId;
            expect((await direct.withdraw(cmd.amount)).body.ok).toBe(true);
            engine.engine.tick();
          }
          for (const p of parties) await agrees(p);
        }
        // A gateway that has just started builds the same account from the database alone.
        await indexer.waitFor(engine.engine.log.maxSeq, 10_000);
        for (const p of parties) {
          const live = await agrees(p);
          const seeded = await accountFromDatabase(gw.deps.db, p.id);
          expect({ ...seeded, asOfSeq: 0 }).toEqual({ ...live, asOfSeq: 0 });
        }
      }),
      { numRuns: 12 },
    );
    // The runs decided both ways (the generator reaches the margin limit).
    expect(decided.fits).toBeGreaterThan(0);
    expect(decided.refused).toBeGreaterThan(0);
  }, 180_000);

  it('streams account.update to a connection that asks for it: the state on subscribe, then every change (deposit, fill, mark)', async () => {
    const [me, other] = [client(makeParty('streamer')), client(makeParty('counter'))];
    for (const c of [me, other]) {
      expect((await c.authorize()).body.ok).toBe(true);
      expect((await faucet(engine.url, engine.adminToken, c.id, '1000')).body.ok).toBe(true);
    }
    await synced(me);
    const ts = Date.now();
    const sig = signHex(me.session.privateKey, `GET\n/v1/stream\n${ts}\n`);
    const query = new URLSearchParams({ party: me.id, user: me.id, sessionId: me.sessionId, sig: `${ts}.${sig}`, kinds: 'account.update' });
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/v1/stream?${query}`);
    const frames: Array<{ kind: string; seq: number; snapshot?: true; userParty: string; payload: Account & { positions: Array<{ markPrice: string }> } }> = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data))));
    const waitFor = async (ok: () => boolean): Promise<void> => {
      await eventually(ok, { timeoutMs: 10_000, everyMs: 5, what: () => `such a frame (collateral of each: ${JSON.stringify(frames.map((f) => f.payload.collateral))})` });
    };
    try {
      await waitFor(() => frames.length >= 1);
      expect(frames[0]).toMatchObject({ kind: 'account.update', snapshot: true, userParty: me.id, payload: { collateral: '1000.0000000000', positions: [] } });
      expect((await faucet(engine.url, engine.adminToken, me.id, '1.5')).body.ok).toBe(true);
      await waitFor(() => frames.some((f) => f.payload.collateral === '1001.5000000000'));
      // A fill opens a position; a later match between others moves the mark (a market no other test trades).
      expect((await other.placeOrder({ market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.01', price: '3000' })).body.ok).toBe(true);
      expect((await me.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.01', price: '3000' })).body.status).toBe('filled');
      await waitFor(() => frames.some((f) => f.payload.positions.length === 1));
      expect((await other.placeOrder({ market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.004', price: '3100' })).body.ok).toBe(true);
      expect((await other.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.004', price: '3100' })).body.ok).toBe(true);
      await waitFor(() => frames.some((f) => f.payload.positions[0]?.markPrice === '3100.0000000000'));
      const last = frames.at(-1)!;
      expect(last.payload).toEqual(await synced(me));
      expect(last.payload).toMatchObject({ unrealizedPnl: '1.0000000000' });
      // Only account frames, each newer than the one before (seq never goes back).
      expect(frames.every((f) => f.kind === 'account.update')).toBe(true);
      for (let i = 1; i < frames.length; i++) expect(frames[i]!.seq).toBeGreaterThan(frames[i - 1]!.seq);
    } finally {
      ws.close();
    }
  });

  it('the client refuses, before signing, a TP or SL that would fire on the current price unless told it is meant; orderMargin agrees with the engine', async () => {
    const SOL = 'SOL-PERP'; // a market no other test of this file trades
    const [me, other] = [await localParty('trigger'), await localParty('tcounter')];
    const clients = [me, other].map(() => new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } }));
    const [mine, theirs] = clients as [GatewayClient, GatewayClient];
    for (const [i, p] of [me, other].entries()) {
      expect((await clients[i]!.createSession(p)).ok).toBe(true);
      expect((await faucet(engine.url, engine.adminToken, p.party, '1000')).body.ok).toBe(true);
    }
    expect((await theirs.placeOrder({ market: SOL, side: 'sell', type: 'limit', size: '2', price: '150' })).ok).toBe(true);
    expect(await mine.placeOrder({ market: SOL, side: 'buy', type: 'limit', size: '1', price: '150' })).toMatchObject({ ok: true, status: 'filled' });
    const account = await waitAccount(mine, me.party);
    expect(account.positions).toMatchObject([{ market: SOL, size: '1.0000000000', markPrice: '150.0000000000' }]);

    const head = engine.engine.log.maxSeq;
    // A long's TP at or below the price, its SL at or above: refused as values, nothing reaches the engine.
    expect(await mine.setTpsl({ market: SOL, tp: { triggerPrice: '149' } })).toMatchObject({ ok: false, code: 'trigger_would_fire', leg: 'tp', triggerPrice: '149', currentPrice: '150.0000000000' });
    expect(await mine.setTpsl({ market: SOL, sl: { triggerPrice: '150' } })).toMatchObject({ ok: false, code: 'trigger_would_fire', leg: 'sl' });
    expect(await mine.placeOrder({ market: SOL, side: 'buy', type: 'limit', size: '1', price: '150', tp: { triggerPrice: '140' } })).toMatchObject({ ok: false, code: 'trigger_would_fire', leg: 'tp', currentPrice: '150' });
    expect(engine.engine.log.maxSeq).toBe(head);
    // Sensible legs pass; a meant one passes too.
    expect(await mine.setTpsl({ market: SOL, tp: { triggerPrice: '160' }, sl: { triggerPrice: '140' } })).toMatchObject({ ok: true });
    expect(await mine.setTpsl({ market: SOL, tp: { triggerPrice: '149' } }, { allowImmediateTrigger: true })).toMatchObject({ ok: true });

    // orderMargin: the margin the engine asks, and whether it fits, before sending.
    const now = await waitAccount(mine, me.party);
    const big = orderMargin(now, 10, { market: SOL, side: 'buy', size: '70', price: '150' });
    expect(big.fits).toBe(false);
    expect(await mine.placeOrder({ market: SOL, side: 'buy', type: 'limit', size: '70', price: '150' })).toMatchObject({ ok: false, code: 'insufficient_margin' });
    const closing = orderMargin(now, 10, { market: SOL, side: 'sell', size: '1', price: '150' });
    expect(closing).toMatchObject({ opening: '0.0000000000', margin: '0.0000000000', fits: true });
    // getUserMe over fetch (as a browser): the signed GET sent as POST /v1/user/me.
    const me2 = await mine.getUserMe();
    if (!me2.ok) throw new Error(me2.code);
    expect(me2.balance).toBe(now.collateral);
    expect(me2.triggers.length).toBeGreaterThan(0);
  });

  async function waitAccount(c: GatewayClient, party: string) {
    const head = engine.engine.log.maxSeq;
    for (;;) {
      const a = await c.getAccount(party);
      if (a.asOfSeq >= head) return a;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
});
