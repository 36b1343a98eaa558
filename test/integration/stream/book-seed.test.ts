// The order book's seed read (src/db/queries/book-seed.ts) on a real PostgreSQL mirror: the
// market's orders that can rest, one by one with their remaining size, oldest first, as of the
// newest event of the same snapshot, and the mirror's event at the anchor seq.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { Database } from '../../../src/db/database.js';
import { loadConfig } from '../../../src/config/env.js';
import { loadBookSeed } from '../../../src/db/queries/book-seed.js';
import { insertEvents, ticks } from './helpers.js';
import { eventFingerprint } from '../../../src/engine/fingerprint.js';

const P = `p::${'ab'.repeat(32)}`;
let db: TestDatabase;
let reader: Database;

async function order(id: string, o: { market?: string; side?: string; type?: string; tif?: string; price?: string | null; size: string; filled?: string; status?: string; seq: number }): Promise<void> {
  await db.sql`INSERT INTO orders (order_id, party, market, side, type, tif, price, size, filled_size, status, created_seq, updated_seq, created_at, updated_at)
    VALUES (${id}, ${P}, ${o.market ?? 'BTC-PERP'}, ${o.side ?? 'buy'}, ${o.type ?? 'limit'}, ${o.tif ?? 'gtc'}, ${o.price === undefined ? '100' : o.price},
      ${o.size}, ${o.filled ?? '0'}, ${o.status ?? 'open'}, ${o.seq}, ${o.seq}, now(), now())`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  reader = new Database(loadConfig({ ENGINE_BASE_URL: 'http://127.0.0.1:9', DATABASE_URL: db.url }), pino({ level: 'silent' }));
});
afterAll(async () => {
  await reader?.close();
  await db?.drop();
});

describe('loadBookSeed', () => {
  it('is null on an empty mirror', async () => {
    expect(await reader.readSnapshot(null, (tx) => loadBookSeed(tx, 'BTC-PERP'))).toBeNull();
  });

  it('reads the resting orders of the market as of the newest event', async () => {
    await insertEvents(db, ticks(1, 9));
    await order('late', { side: 'sell', price: '105', size: '2', seq: 8 });
    await order('old', { price: '99', size: '1.5', filled: '0.5', status: 'partially_filled', seq: 2 });
    await order('ioc', { tif: 'ioc', size: '1', seq: 3 });
    await order('mkt', { type: 'market', price: null, size: '1', seq: 4 });
    await order('done', { size: '1', filled: '1', status: 'filled', seq: 5 });
    await order('gone', { size: '1', status: 'cancelled', seq: 6 });
    await order('eth', { market: 'ETH-PERP', size: '1', seq: 7 });
    await order('alo', { tif: 'alo', price: '98', size: '3', seq: 9 });
    const seed = await reader.readSnapshot(null, (tx) => loadBookSeed(tx, 'BTC-PERP', 9));
    expect(seed).toEqual({
      asOfSeq: 9,
      orders: [
        { orderId: 'old', side: 'buy', price: '99.0000000000', remaining: '1.0000000000' },
        { orderId: 'late', side: 'sell', price: '105.0000000000', remaining: '2.0000000000' },
        { orderId: 'alo', side: 'buy', price: '98.0000000000', remaining: '3.0000000000' },
      ],
      anchor: expect.objectContaining({ seq: 9, kind: 'engine.tick_start' }),
    });
    // The mirror's copy of the anchor event has the fingerprint of the event the stream delivered
    // there (the database keeps microseconds and its own key order; the fingerprint ignores both).
    expect(eventFingerprint(seed!.anchor!)).toBe(eventFingerprint(ticks(9, 9)[0]!));
    // An anchor the mirror does not hold (yet).
    expect(await reader.readSnapshot(null, (tx) => loadBookSeed(tx, 'BTC-PERP', 50))).toMatchObject({ anchor: null });
  });
});
