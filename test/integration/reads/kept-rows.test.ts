// Fill, event and deposit rows are kept as written JSON by version (src/db/json/row-cache.ts): the
// row's key and its xmin. These tests change rows under a warm gateway the ways the indexer can
// (an update in place, a history replaced by delete and insert of the same keys with other
// content) and check every body against a gateway that keeps nothing, byte for byte; and that a
// page whose rows are kept is really written from them (the cache's own counters and /metrics).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';

let db: TestDatabase;
let kept: TestGateway;
let plain: TestGateway;
let seeded: SeedResult;

beforeAll(async () => {
  db = await createTestDatabase();
  seeded = await seed(db.sql, { seed: 5, parties: 6, fills: 600, batchEvery: 100, copy: db.kind === 'postgres' });
  kept = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
  plain = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true', LIST_ROW_CACHE_BYTES: '0' });
}, 120_000);
afterAll(async () => {
  await kept?.close();
  await plain?.close();
  await db?.drop();
});

function urls(): string[] {
  const party = seeded.parties[2]!;
  const mid = Math.floor(seeded.maxSeq / 2);
  return [
    '/v1/fills?limit=100',
    `/v1/fills?before=${mid}&limit=20&market=BTC-PERP`,
    `/v1/users/${party}/fills?limit=50`,
    `/v1/events?since=${mid}&limit=100`,
    `/v1/events?user=${party}&since=0&limit=100`,
    '/v1/events?limit=30',
    '/v1/deposits?limit=100',
    `/v1/users/${party}/deposits`,
  ];
}

async function expectSameBodies(label: string): Promise<void> {
  for (const url of urls()) {
    const [a, b] = await Promise.all([kept.app.inject(url), plain.app.inject(url)]);
    expect(a.statusCode, url).toBe(200);
    expect(a.body, `${label}: ${url}`).toBe(b.body);
  }
}

describe('list rows kept by version', () => {
  it('a warm page is written from kept rows, and counted', async () => {
    await expectSameBodies('cold');
    const before = kept.app.db.rows.stats();
    await expectSameBodies('warm');
    const after = kept.app.db.rows.stats();
    expect(after.hits - before.hits).toBeGreaterThan(300);
    expect(after.misses - before.misses).toBe(0);
    expect(after.bytes).toBeGreaterThan(0);
    expect(plain.app.db.rows.stats()).toEqual({ hits: 0, misses: 0, bytes: 0, rows: 0, databaseChanges: 0 });
    const metrics = (await kept.app.inject('/metrics')).body;
    expect(Number(/^bff_list_row_cache_hits_total (\d+)/m.exec(metrics)?.[1])).toBe(after.hits);
    expect(Number(/^bff_list_row_cache_bytes (\d+)/m.exec(metrics)?.[1])).toBe(after.bytes);
  });

  it('a row updated in place is read again (new version), never served from what was kept', async () => {
    await expectSameBodies('before');
    const top = (await db.sql<{ seq: string }[]>`SELECT max(seq)::text AS seq FROM fills`)[0]!.seq;
    await db.sql`UPDATE fills SET price = price + 1, fee = fee + 0.5 WHERE seq = ${top}`;
    await db.sql`UPDATE deposits SET tx_id = 'changed-in-place' WHERE seq = (SELECT max(seq) FROM deposits)`;
    const body = (await kept.app.inject('/v1/deposits?limit=1')).json() as { items: Array<{ txId: string }> };
    expect(body.items[0]!.txId).toBe('changed-in-place');
    await expectSameBodies('after update');
  });

  it('a history replaced under the same keys (delete, insert other content) is read again', async () => {
    await expectSameBodies('before');
    const mid = Math.floor(seeded.maxSeq / 2);
    await db.sql.begin(async (tx) => {
      const rows = await tx<{ seq: string; kind: string; ts: string; market: string | null; party: string | null }[]>`
        DELETE FROM events WHERE seq > ${mid} AND seq <= ${mid + 40} RETURNING seq::text, kind, ts::text, market, party`;
      for (const r of rows) {
        await tx`INSERT INTO events (seq, kind, ts, market, party, payload)
          VALUES (${r.seq}, ${r.kind}, ${r.ts}, ${r.market}, ${r.party}, ${tx.json({ replaced: true, seq: Number(r.seq) })})`;
      }
      expect(rows.length).toBeGreaterThan(10);
    });
    const page = (await kept.app.inject(`/v1/events?since=${mid}&limit=5`)).json() as { items: Array<{ payload: unknown; seq: number }> };
    expect(page.items.map((e) => e.payload)).toEqual(page.items.map((e) => ({ replaced: true, seq: e.seq })));
    await expectSameBodies('after replacement');
  });

  it('rows deleted from the end of a page leave it shorter, with the right cursor', async () => {
    await expectSameBodies('before');
    const mid = Math.floor(seeded.maxSeq / 2);
    await db.sql`DELETE FROM fills WHERE seq IN (SELECT seq FROM fills WHERE seq < ${mid} ORDER BY seq DESC LIMIT 3)`;
    await expectSameBodies('after delete');
  });
});
