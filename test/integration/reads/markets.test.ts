// GET /v1/markets and /v1/markets/:market: the engine's markets with their grid rules and status,
// 24 h statistics from the mirror's fills (one trade per match, a flip's two taker legs once),
// cached briefly, and the mirror's `markets` table while the engine is down.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startFakeEngine, type FakeEngine } from '../../support/fake-engine.js';
import { A, B } from './fixtures.js';
import { eventually } from '../../support/eventually.js';

const ENGINE_MARKETS = [
  { symbol: 'BTC-PERP', szDecimals: 4, minNotional: '10.0000000000', maxLeverage: 20, status: 'active' },
  { symbol: 'ETH-PERP', szDecimals: 3, minNotional: '10', maxLeverage: 20, status: 'active' },
  { symbol: 'NEW-PERP', szDecimals: 7, minNotional: '5.5', maxLeverage: 3, status: 'halted' },
];

let db: TestDatabase;
let engine: FakeEngine;
let gw: TestGateway;
let marketCalls = 0;

async function insertLeg(seq: number, leg: number, role: 'taker' | 'maker', market: string, size: string, price: string, at: number): Promise<void> {
  await db.sql`
    INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl, new_balance, position_id, created_at)
    VALUES (${seq}, ${leg}, ${`${seq}-${leg}`}, ${`m${seq}`}, ${`o${seq}-${leg}`}, ${role === 'taker' ? A : B}, ${market}, 'buy', ${role},
            ${size}, ${price}, 0, 0, 1000, ${`p${seq}-${leg}`}, ${new Date(at).toISOString()})`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const now = Date.now();
  const h = 3_600_000;
  // BTC: one match 25 h ago (outside the window), then three inside it; seq 12 is a flip (taker legs 1 + 2).
  await insertLeg(10, 0, 'taker', 'BTC-PERP', '4', '90', now - 25 * h);
  await insertLeg(10, 1, 'maker', 'BTC-PERP', '4', '90', now - 25 * h);
  await insertLeg(11, 0, 'taker', 'BTC-PERP', '1', '100', now - 20 * h);
  await insertLeg(11, 1, 'maker', 'BTC-PERP', '1', '100', now - 20 * h);
  await insertLeg(12, 0, 'taker', 'BTC-PERP', '1', '120', now - 10 * h);
  await insertLeg(12, 1, 'taker', 'BTC-PERP', '2', '120', now - 10 * h);
  await insertLeg(12, 2, 'maker', 'BTC-PERP', '3', '120', now - 10 * h);
  await insertLeg(13, 0, 'taker', 'BTC-PERP', '0.5', '95.5', now - 1 * h);
  await insertLeg(13, 1, 'maker', 'BTC-PERP', '0.5', '95.5', now - 1 * h);
  // ETH: only a match older than 24 h. Times grow with seqs, as the engine stamps them (the window's
  // first seq is found by a binary search that relies on it).
  await insertLeg(9, 0, 'taker', 'ETH-PERP', '1', '3000', now - 30 * h);
  // Open interest: BTC longs 1.5 + 0.25 (against a short of 1.75); a closed long and an open short
  // alone (ETH) do not count.
  const position = (id: string, party: string, market: string, size: string, status: 'open' | 'closed') => db.sql`
    INSERT INTO positions (position_id, party, market, size, entry_price, status, opened_seq, updated_seq, opened_at, updated_at)
    VALUES (${id}, ${party}, ${market}, ${size}, 100, ${status}, 1, 1, now(), now())`;
  await position('oi1', 'pa', 'BTC-PERP', '1.5', 'open');
  await position('oi2', 'pb', 'BTC-PERP', '0.25', 'open');
  await position('oi3', 'pc', 'BTC-PERP', '-1.75', 'open');
  await position('oi4', 'pd', 'BTC-PERP', '9', 'closed');
  await position('oi5', 'pe', 'ETH-PERP', '-2', 'open');
  await db.sql`INSERT INTO events (seq, kind, ts, payload) VALUES (15, 'engine.tick_start', ${new Date(now).toISOString()}, '{}'::jsonb)`;
  await db.sql`INSERT INTO markets (symbol, sz_decimals, min_notional, max_leverage, status)
    VALUES ('BTC-PERP', 4, 10, 20, 'active'), ('ETH-PERP', 3, 10, 20, 'active')`;

  engine = await startFakeEngine();
  engine.handler = (req, res: ServerResponse) => {
    if (req.url !== '/v1/markets') return false;
    marketCalls++;
    const body = JSON.stringify({ markets: ENGINE_MARKETS });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return true;
  };
  gw = await startGateway({ DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, AUTH_DISABLED: 'true' });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await engine?.close();
  await db?.drop();
});

const NO_TRADES = {
  open: null, high: null, low: null, last: null, change: null, changePct: null,
  baseVolume: '0.0000000000', quoteVolume: '0.0000000000', trades: 0, asOfSeq: 15,
};

describe('GET /v1/markets', () => {
  it("lists the engine's markets in its order with rules and 24 h statistics", async () => {
    const res = await gw.app.inject({ url: '/v1/markets', headers: { origin: 'https://app.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=1');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const body = res.json();
    expect(body.nextCursor).toBeNull();
    expect(body.items).toEqual([
      {
        symbol: 'BTC-PERP', status: 'active', szDecimals: 4, minNotional: '10.0000000000', maxLeverage: 20,
        sizeStep: '0.0001000000', priceSigFigs: 5, maxPriceDecimals: 2,
        lastTrade: { price: '95.5000000000', seq: 13, at: expect.any(String) },
        stats24h: {
          open: '100.0000000000', high: '120.0000000000', low: '95.5000000000', last: '95.5000000000',
          change: '-4.5000000000', changePct: '-4.5000000000',
          // 1 + 3 (the flip's legs, once) + 0.5; 100 + 360 + 47.75
          baseVolume: '4.5000000000', quoteVolume: '507.7500000000', trades: 3, asOfSeq: 15,
        },
        openInterest: '1.7500000000',
      },
      {
        symbol: 'ETH-PERP', status: 'active', szDecimals: 3, minNotional: '10.0000000000', maxLeverage: 20,
        sizeStep: '0.0010000000', priceSigFigs: 5, maxPriceDecimals: 3, stats24h: NO_TRADES,
        // Its only match is older than the window: no 24 h figures, but its last price and time.
        lastTrade: { price: '3000.0000000000', seq: 9, at: expect.any(String) },
        openInterest: '0.0000000000',
      },
      {
        symbol: 'NEW-PERP', status: 'halted', szDecimals: 7, minNotional: '5.5000000000', maxLeverage: 3,
        sizeStep: '0.0000001000', priceSigFigs: 5, maxPriceDecimals: 0, lastTrade: null, stats24h: NO_TRADES,
        openInterest: '0.0000000000',
      },
    ]);
  });

  it('one market by symbol; 404 not_found for an unknown one, 400 for a malformed one', async () => {
    const one = await gw.app.inject('/v1/markets/BTC-PERP');
    expect([one.statusCode, one.json().symbol, one.json().stats24h.trades]).toEqual([200, 'BTC-PERP', 3]);
    const unknown = await gw.app.inject('/v1/markets/btc-perp');
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { error: 'no market btc-perp', code: 'not_found' }]);
    const bad = await gw.app.inject('/v1/markets/a%20b');
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'bad_request']);
    expect((await gw.app.inject('/v1/markets?limit=5')).statusCode).toBe(400);
  });

  it('asks the engine at most once per cache period however many requests arrive', async () => {
    const before = marketCalls;
    await Promise.all(Array.from({ length: 20 }, () => gw.app.inject('/v1/markets')));
    expect(marketCalls - before).toBeLessThanOrEqual(1);
  });

  it('a refresh reads only what changed and gives the figures a fresh read gives', async () => {
    const before = (await gw.app.inject('/v1/markets/BTC-PERP')).json().stats24h;
    expect(before.trades).toBe(3);
    // A new match (a flip: taker legs 0.25 + 0.75) after the first read.
    await insertLeg(16, 0, 'taker', 'BTC-PERP', '0.25', '130', Date.now());
    await insertLeg(16, 1, 'taker', 'BTC-PERP', '0.75', '130', Date.now());
    await insertLeg(16, 2, 'maker', 'BTC-PERP', '1', '130', Date.now());
    await db.sql`INSERT INTO events (seq, kind, ts, payload) VALUES (17, 'engine.tick_start', ${new Date().toISOString()}, '{}'::jsonb)`;
    const after = await eventually(
      async () => {
        const stats = (await gw.app.inject('/v1/markets/BTC-PERP')).json().stats24h;
        return stats.trades !== 3 && stats;
      },
      { timeoutMs: 10_000, everyMs: 100, what: 'the new match in stats24h' },
    );
    expect(after).toEqual({
      open: '100.0000000000', high: '130.0000000000', low: '95.5000000000', last: '130.0000000000',
      change: '30.0000000000', changePct: '30.0000000000',
      baseVolume: '5.5000000000', quoteVolume: '637.7500000000', trades: 4, asOfSeq: 17,
    });
    const fresh = await startGateway({ DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, AUTH_DISABLED: 'true' });
    try {
      expect((await fresh.app.inject('/v1/markets/BTC-PERP')).json().stats24h).toEqual(after);
    } finally {
      await fresh.close();
    }
  });

  it('uses the mirror\'s markets table while the engine cannot answer, and still serves the statistics', async () => {
    const down = await startGateway({ DATABASE_URL: db.url, ENGINE_BASE_URL: 'http://127.0.0.1:9', AUTH_DISABLED: 'true' });
    try {
      const res = await down.app.inject('/v1/markets');
      expect(res.statusCode).toBe(200);
      expect(res.json().items.map((m: { symbol: string; minNotional: string; stats24h: { trades: number } }) => [m.symbol, m.minNotional, m.stats24h.trades]))
        .toEqual([['BTC-PERP', '10.0000000000', 4], ['ETH-PERP', '10.0000000000', 0]]);
    } finally {
      await down.close();
    }
  });
});

describe('the 24 h window edge', () => {
  it('counts a match 5 s inside the window and not one 5 s outside it, whatever the minute', async () => {
    const edgeDb = await createTestDatabase();
    const now = Date.now();
    const leg = (seq: number, price: string, at: number) => edgeDb.sql`
      INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl, new_balance, position_id, created_at)
      VALUES (${seq}, 0, ${`${seq}-0`}, ${`m${seq}`}, 'o', ${A}, 'BTC-PERP', 'buy', 'taker', 1, ${price}, 0, 0, 1000, 'p', ${new Date(at).toISOString()})`;
    await leg(1, '50', now - 86_400_000 - 5_000);
    await leg(2, '60', now - 86_400_000 + 5_000);
    await leg(3, '70', now - 10_000);
    const edgeGw = await startGateway({ DATABASE_URL: edgeDb.url, ENGINE_BASE_URL: engine.url, AUTH_DISABLED: 'true' });
    try {
      const stats = (await edgeGw.app.inject('/v1/markets/BTC-PERP')).json().stats24h;
      expect([stats.open, stats.low, stats.last, stats.trades]).toEqual(['60.0000000000', '60.0000000000', '70.0000000000', 2]);
    } finally {
      await edgeGw.close();
    }
    // A market whose last match is older than the window: no 24 h figures, but its last price and time.
    await edgeDb.sql`DELETE FROM fills WHERE seq > 1`;
    const quietGw = await startGateway({ DATABASE_URL: edgeDb.url, ENGINE_BASE_URL: engine.url, AUTH_DISABLED: 'true' });
    try {
      const market = (await quietGw.app.inject('/v1/markets/BTC-PERP')).json();
      expect([market.stats24h.last, market.stats24h.trades]).toEqual([null, 0]);
      expect(market.lastTrade).toEqual({ price: '50.0000000000', seq: 1, at: new Date(now - 86_400_000 - 5_000).toISOString() });
    } finally {
      await quietGw.close();
      await edgeDb.drop();
    }
  });
});
