// Reads that meet a value of the mirror the contract does not allow answer it as recorded (as every
// list read writes its rows), never a 500 (issue 29). Over real HTTP on a seeded mirror.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { seed } from '../../../sandbox/seed/index.js';

describe('mirror values outside the contract', () => {
  let db: TestDatabase;
  let gw: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase();
    await seed(db.sql, { seed: 11, parties: 4, fills: 200, batchEvery: 50, copy: db.kind === 'postgres' });
    gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' }, { listen: true });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await db?.drop();
  });

  it('a taker leg whose side is neither buy nor sell: /v1/trades answers 200 with it as recorded', async () => {
    const [leg] = await db.sql<Array<{ seq: string; market: string }>>`
      SELECT f.seq::text AS seq, f.market FROM fills f WHERE f.role = 'taker' ORDER BY f.seq DESC LIMIT 1`;
    await db.sql`UPDATE fills SET side = 'BUY ' WHERE seq = ${leg!.seq} AND role = 'taker'`;
    const res = await fetch(`${gw.url}/v1/trades?market=${encodeURIComponent(leg!.market)}&limit=5`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: Array<{ seq: number; side: string }> };
    expect(body.items.find((t) => t.seq === Number(leg!.seq))?.side).toBe('BUY ');
    // The same row through the fills list (written from raw rows) says the same.
    const fills = (await (await fetch(`${gw.url}/v1/fills?market=${encodeURIComponent(leg!.market)}&limit=5`)).json()) as { items: Array<{ seq: number; role: string; side: string }> };
    expect(fills.items.find((f) => f.seq === Number(leg!.seq) && f.role === 'taker')?.side).toBe('BUY ');
  });
});
