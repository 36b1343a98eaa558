// GET /v1/users/:party/account/as-of?seq=N over a real mirror: the reference engine plays deposits,
// trades in two markets (growing, shrinking, flipping through zero, self-trades) and a withdrawal;
// after every action the engine's own collateral and open positions are noted with its seq; the
// reference indexer writes the mirror; the route, asked for each noted seq, answers exactly the
// engine's state at that seq. Then its strict query rules and the answer beyond the mirror's head.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { formatDec } from '../../../sandbox/engine/decimal.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

const A = `alice::${'a'.repeat(64)}`;
const B = `bob::${'b'.repeat(64)}`;

interface Noted {
  seq: number;
  collateral: string;
  positions: Array<{ positionId: string; market: string; size: string; entryPrice: string; realizedPnl: string }>;
}

let db: TestDatabase;
let engine: RunningEngine;
let indexer: RunningIndexer;
let gw: TestGateway;
const noted: Noted[] = [];

const stacks = fileScope();
beforeAll(async () => {
  db = await createTestDatabase();
  engine = await testEngine(stacks);
  indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
  const e = engine.engine;
  const note = () => {
    const positions = e.accounts
      .openPositions(A)
      .map((p) => ({ positionId: p.positionId, market: p.market, size: formatDec(p.size), entryPrice: formatDec(p.entryPrice), realizedPnl: formatDec(p.realizedPnl) }))
      .sort((x, y) => x.market.localeCompare(y.market));
    noted.push({ seq: e.log.maxSeq, collateral: formatDec(e.accounts.balance(A)), positions });
  };
  const place = (who: string, market: string, side: 'buy' | 'sell', size: string, price: string, tif = 'gtc') => {
    const r = e.placeOrder(who, { market, side, type: 'limit', size, price, tif });
    if (!r.ok) throw new Error(`${r.code}: ${r.error}`);
  };
  const trade = (taker: string, maker: string, market: string, side: 'buy' | 'sell', size: string, price: string) => {
    place(maker, market, side === 'buy' ? 'sell' : 'buy', size, price);
    place(taker, market, side, size, price, 'ioc');
    note();
  };
  note(); // nothing yet
  e.deposit({ party: B, amount: '1000000' }, 'faucet');
  e.deposit({ party: A, amount: '500000', txId: `0x${'1'.repeat(64)}` }, 'chain');
  note();
  trade(A, B, 'BTC-PERP', 'buy', '0.3000', '60000'); // open long
  trade(B, A, 'BTC-PERP', 'sell', '0.1000', '60010'); // A grows as maker
  trade(A, B, 'ETH-PERP', 'sell', '2.0000', '3000'); // a short elsewhere
  trade(A, B, 'BTC-PERP', 'sell', '0.1000', '60100'); // shrink: realized PnL
  trade(A, A, 'BTC-PERP', 'buy', '0.0500', '60050'); // self-trade
  trade(A, B, 'BTC-PERP', 'sell', '0.5000', '59900'); // flip through zero: a fresh epoch
  e.requestWithdrawal(A, { amount: '1234.5' });
  e.tick();
  note();
  trade(A, B, 'ETH-PERP', 'buy', '2.0000', '2990'); // ETH closed
  e.deposit({ party: A, amount: '7.25' }, 'faucet');
  note();
  e.tick();
  await indexer.waitFor(e.log.maxSeq, 30_000);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await indexer?.close();
  await db?.drop();
});

async function get(url: string) {
  const res = await gw.app.inject(url);
  return { status: res.statusCode, body: res.json() };
}
const asOf = (seq: string | number, party = A) => get(`/v1/users/${party}/account/as-of?seq=${seq}`);

describe('GET /v1/users/:party/account/as-of', () => {
  it("answers, at every noted seq, the engine's own collateral and open epochs at that seq", async () => {
    expect(noted.length).toBeGreaterThan(8);
    const head = engine.engine.log.maxSeq;
    for (const n of noted) {
      const { status, body } = await asOf(n.seq);
      expect(status).toBe(200);
      expect({ seq: n.seq, collateral: body.collateral, positions: body.positions.map(({ asOfSeq: _seq, ...p }: { asOfSeq: number }) => p) }).toEqual({ seq: n.seq, collateral: n.collateral, positions: n.positions });
      expect(body).toMatchObject({ party: A, asOfSeq: n.seq, head });
      for (const p of body.positions) expect(p.asOfSeq).toBeLessThanOrEqual(n.seq);
      if (body.collateralAsOfSeq !== null) expect(body.collateralAsOfSeq).toBeLessThanOrEqual(n.seq);
    }
    // The flip left a fresh epoch; the ETH epoch is gone once closed.
    const last = noted.at(-1)!;
    expect(last.positions.map((p) => p.market)).toEqual(['BTC-PERP']);
    expect(noted.some((n) => n.positions.length === 2)).toBe(true);
  });

  it('a party without events has zero collateral, no seq and no positions; seq 0 is before everything', async () => {
    expect((await asOf(5, `nobody::${'e'.repeat(64)}`)).body).toEqual({ party: `nobody::${'e'.repeat(64)}`, asOfSeq: 5, head: engine.engine.log.maxSeq, collateral: '0.0000000000', collateralAsOfSeq: null, positions: [] });
    expect((await asOf(0)).body).toMatchObject({ asOfSeq: 0, collateral: '0.0000000000', collateralAsOfSeq: null, positions: [] });
  });

  it('a seq beyond the mirror is 409 not_yet_indexed with the head', async () => {
    const head = engine.engine.log.maxSeq;
    expect(await asOf(head + 1)).toEqual({ status: 409, body: { error: `the mirror holds events up to seq ${head}, not yet ${head + 1}`, code: 'not_yet_indexed', head } });
    expect((await asOf(head)).status).toBe(200);
  });

  it('refuses a seq that is not a plain decimal integer within range, and unknown parameters, with 400 bad_request', async () => {
    for (const bad of ['', '-1', '007', '00', '1e3', '1.5', '+3', ' 3', '0x10', 'abc', '9007199254740992', '99999999999999999']) {
      const r = await asOf(encodeURIComponent(bad));
      expect([bad, r.status, r.body.code]).toEqual([bad, 400, 'bad_request']);
    }
    expect((await get(`/v1/users/${A}/account/as-of`)).status).toBe(400);
    expect((await get(`/v1/users/${A}/account/as-of?seq=1&seq=2`)).status).toBe(400);
    expect((await get(`/v1/users/${A}/account/as-of?seq=1&at=2`)).body.code).toBe('bad_request');
    expect((await get(`/v1/users/not-a-party/account/as-of?seq=1`)).body.code).toBe('bad_request');
  });
});
