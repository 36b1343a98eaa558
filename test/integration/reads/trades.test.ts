// GET /v1/trades: one record per match (the taker's side), newest first, paged by seq; a taker that
// flips through zero (two taker legs in one event) is one trade with the match size; market required.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { A, B, insertFixtures, ts } from './fixtures.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  await insertFixtures(db.sql);
  // seq 50: A takes 0.7 BTC from B as a flip (short 0.3 → long 0.4): two taker legs, one match.
  const T = (n: number) => ts(n);
  await db.sql`INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl,
      new_balance, position_id, created_at) VALUES
    (50, 0, '50-0', 'm-5', 'o-20', ${A}, 'BTC-PERP', 'buy', 'taker', 0.3, 67000, 10.05, -300, 100900, 'pos-a3', ${T(50)}),
    (50, 1, '50-1', 'm-5', 'o-20', ${A}, 'BTC-PERP', 'buy', 'taker', 0.4, 67000, 13.4, 0, 100900, 'pos-a9', ${T(50)}),
    (50, 2, '50-2', 'm-5', 'o-21', ${B}, 'BTC-PERP', 'sell', 'maker', 0.7, 67000, 0, 0, 50456.525, 'pos-b1', ${T(50)})`;
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

const get = async (path: string) => {
  const res = await gw.app.inject({ method: 'GET', url: path });
  return { status: res.statusCode, body: res.json() };
};

describe('GET /v1/trades', () => {
  it('one record per match with the taker side, newest first; a flip is one trade', async () => {
    const res = await get('/v1/trades?market=BTC-PERP');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { seq: 50, matchId: 'm-5', market: 'BTC-PERP', side: 'buy', price: '67000.0000000000', size: '0.7000000000', createdAt: ts(50) },
        { seq: 40, matchId: 'm-3', market: 'BTC-PERP', side: 'buy', price: '66000.0000000000', size: '0.8000000000', createdAt: ts(40) },
        { seq: 21, matchId: 'm-1', market: 'BTC-PERP', side: 'sell', price: '65000.0000000000', size: '0.5000000000', createdAt: ts(21) },
      ],
      nextCursor: null,
    });
    expect((await get('/v1/trades?market=ETH-PERP')).body.items.map((t: { seq: number }) => t.seq)).toEqual([33]);
  });

  it('pages by seq with before and limit', async () => {
    const p1 = await get('/v1/trades?market=BTC-PERP&limit=1');
    expect([p1.body.items.map((t: { seq: number }) => t.seq), p1.body.nextCursor]).toEqual([[50], 50]);
    const p2 = await get('/v1/trades?market=BTC-PERP&limit=1&before=50');
    expect([p2.body.items.map((t: { seq: number }) => t.seq), p2.body.nextCursor]).toEqual([[40], 40]);
    const p3 = await get('/v1/trades?market=BTC-PERP&limit=5&before=40');
    expect([p3.body.items.map((t: { seq: number }) => t.seq), p3.body.nextCursor]).toEqual([[21], null]);
  });

  it('needs a market: 400 with a code', async () => {
    const res = await get('/v1/trades');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    expect((await get('/v1/trades?market=BTC-PERP&limit=0')).status).toBe(400);
  });
});
