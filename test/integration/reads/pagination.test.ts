// Pagination over a seeded data set: walking every list route page by page gives exactly the rows
// of the equivalent SQL, in order, none twice, none missing, and a page never splits one seq.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';

let db: TestDatabase;
let gw: TestGateway;
let seeded: SeedResult;

beforeAll(async () => {
  db = await createTestDatabase();
  seeded = await seed(db.sql, { seed: 7, parties: 12, fills: 3_000, batchEvery: 300, copy: db.kind === 'postgres' });
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

type Item = Record<string, unknown>;
/** Pages that went past `limit` to keep a seq whole, across all walks. */
let extended = 0;

/** Walks a list route to its end; checks each page against the page rule. */
async function walk(base: string, limit: number, cursorParam: 'before' | 'since', keyOf: (i: Item) => number): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: number | null = null;
  const [path, query = ''] = base.split('?');
  for (let pages = 0; pages < 100_000; pages++) {
    const params = new URLSearchParams(query);
    params.set('limit', String(limit));
    if (cursor !== null) params.set(cursorParam, String(cursor));
    const url = `${path}?${params.toString()}`;
    const res = await gw.app.inject(url);
    expect(res.statusCode, url).toBe(200);
    const body = res.json() as { items: Item[]; nextCursor: number | null };
    if (body.nextCursor !== null) {
      expect(body.items.length, url).toBeGreaterThanOrEqual(limit);
      const last = keyOf(body.items.at(-1)!);
      expect(body.nextCursor).toBe(last);
      // Anything beyond `limit` shares the last key.
      for (const extra of body.items.slice(limit)) expect(keyOf(extra)).toBe(last);
      if (body.items.length > limit) extended++;
    } else {
      expect(body.items.length).toBeLessThanOrEqual(limit + 10);
    }
    if (out.length > 0 && body.items.length > 0) {
      // No key continues from one page to the next.
      expect(keyOf(body.items[0]!)).not.toBe(keyOf(out.at(-1)!));
    }
    out.push(...body.items);
    if (body.nextCursor === null) return out;
    cursor = body.nextCursor;
  }
  throw new Error('too many pages');
}

const col = (rows: Array<Record<string, unknown>>, key: string) => rows.map((r) => String(r[key]));
const num = (key: string) => (i: Item) => Number(i[key]);

describe('walking every list to its end', () => {
  it('global fills, several limits, legs never split', async () => {
    const truth = col(await db.sql`SELECT fill_id FROM fills ORDER BY seq DESC, leg`, 'fill_id');
    expect(truth.length).toBe(seeded.counts.fills);
    extended = 0;
    for (const limit of [7, 100, 1000]) {
      const items = await walk('/v1/fills', limit, 'before', num('seq'));
      expect(items.map((i) => i.fillId)).toEqual(truth);
    }
    expect(extended).toBeGreaterThan(0);
    // Events with 3+ legs exist (flips), so limit 1 and 2 exercise the extension.
    const multi = await db.sql`SELECT seq FROM fills GROUP BY seq HAVING count(*) >= 3 LIMIT 1`;
    expect(multi.length).toBe(1);
  });

  it('one party: fills by market with limit 1, positions all, triggers, orders, deposits, withdrawals, user batches', async () => {
    const party = seeded.parties[3]!;
    const sql = db.sql;
    expect((await walk(`/v1/users/${party}/fills?market=ETH-PERP`, 1, 'before', num('seq'))).map((i) => i.fillId)).toEqual(
      col(await sql`SELECT fill_id FROM fills WHERE party = ${party} AND market = 'ETH-PERP' ORDER BY seq DESC, leg`, 'fill_id'),
    );
    expect((await walk(`/v1/fills?user=${party}`, 5, 'before', num('seq'))).map((i) => i.fillId)).toEqual(
      col(await sql`SELECT fill_id FROM fills WHERE party = ${party} ORDER BY seq DESC, leg`, 'fill_id'),
    );
    for (const status of ['open', 'closed', 'all']) {
      const truth = col(
        await sql`SELECT position_id FROM positions WHERE party = ${party} ${status === 'all' ? sql`` : sql`AND status = ${status}`} ORDER BY updated_seq DESC, position_id`,
        'position_id',
      );
      expect((await walk(`/v1/users/${party}/positions?status=${status}`, 2, 'before', num('updatedSeq'))).map((i) => i.positionId)).toEqual(truth);
    }
    expect((await walk(`/v1/users/${party}/triggers`, 3, 'before', num('createdSeq'))).map((i) => i.triggerId)).toEqual(
      col(await sql`SELECT trigger_id FROM triggers WHERE party = ${party} ORDER BY created_seq DESC, trigger_id`, 'trigger_id'),
    );
    expect((await walk(`/v1/orders?user=${party}&status=filled`, 9, 'before', num('createdSeq'))).map((i) => i.orderId)).toEqual(
      col(await sql`SELECT order_id FROM orders WHERE party = ${party} AND status = 'filled' ORDER BY created_seq DESC, order_id`, 'order_id'),
    );
    expect((await walk(`/v1/users/${party}/deposits`, 1, 'before', num('seq'))).map((i) => i.seq)).toEqual(
      (await sql`SELECT seq FROM deposits WHERE party = ${party} ORDER BY seq DESC`).map((r) => Number(r.seq)),
    );
    expect((await walk(`/v1/users/${party}/user-batches`, 2, 'since', num('userSeq'))).map((i) => i.userSeq)).toEqual(
      (await sql`SELECT user_seq FROM user_batches WHERE party = ${party} ORDER BY user_seq`).map((r) => Number(r.user_seq)),
    );
  });

  it('global orders, deposits, withdrawals, batches, user batches, verifications, events', async () => {
    const sql = db.sql;
    expect((await walk('/v1/orders', 250, 'before', num('createdSeq'))).map((i) => i.orderId)).toEqual(
      col(await sql`SELECT order_id FROM orders ORDER BY created_seq DESC, order_id`, 'order_id'),
    );
    expect((await walk('/v1/orders?market=SOL-PERP&status=cancelled', 10, 'before', num('createdSeq'))).map((i) => i.orderId)).toEqual(
      col(await sql`SELECT order_id FROM orders WHERE market = 'SOL-PERP' AND status = 'cancelled' ORDER BY created_seq DESC, order_id`, 'order_id'),
    );
    expect((await walk('/v1/deposits', 4, 'before', num('seq'))).length).toBe(seeded.counts.deposits);
    expect((await walk('/v1/withdrawals?status=approved', 2, 'before', num('seq'))).map((i) => i.withdrawalId)).toEqual(
      col(await sql`SELECT withdrawal_id FROM withdrawals WHERE status = 'approved' ORDER BY seq DESC`, 'withdrawal_id'),
    );
    expect((await walk('/v1/batches', 2, 'before', num('batchNum'))).map((i) => i.batchNum)).toEqual(
      (await sql`SELECT batch_num FROM batches ORDER BY batch_num DESC`).map((r) => Number(r.batch_num)),
    );
    const ub = await walk('/v1/user-batches', 5, 'before', num('batchNum'));
    expect(ub.map((i) => `${i.party}/${i.userSeq}`)).toEqual(
      (await sql`SELECT party, user_seq FROM user_batches WHERE batch_num IS NOT NULL ORDER BY batch_num DESC, party, user_seq`).map(
        (r) => `${r.party}/${r.user_seq}`,
      ),
    );
    expect(ub.length).toBeGreaterThan(0);
    const claims = await walk('/v1/verifications/user-batches', 20, 'before', num('engineSeq'));
    expect(claims.length).toBe(Number((await sql`SELECT count(*) AS n FROM events WHERE kind = 'engine.user_batch_committed'`)[0]!.n));
    expect(claims.filter((c) => c.status === 'mismatch').map((c) => [c.party, c.userSeq])).toEqual([[seeded.mismatch!.party, seeded.mismatch!.userSeq]]);
    const mismatch = await walk('/v1/verifications/user-batches?status=mismatch', 1, 'before', num('engineSeq'));
    expect(mismatch.map((c) => c.party)).toEqual([seeded.mismatch!.party]);
    const manifests = await walk('/v1/verifications/manifests', 3, 'before', num('engineSeq'));
    expect(manifests.map((m) => `${m.batchNum}:${m.status}`)).toEqual(
      Array.from({ length: seeded.batches }, (_, i) => `${seeded.batches - i}:${i === 0 ? 'pending' : 'match'}`),
    );
    const events = await walk('/v1/events?since=0', 1000, 'since', num('seq'));
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: seeded.maxSeq }, (_, i) => i + 1));
    const fills = await walk('/v1/events?type=engine.order_filled&market=BTC-PERP', 97, 'since', num('seq'));
    expect(fills.map((e) => e.seq)).toEqual(
      (await sql`SELECT seq FROM events WHERE kind = 'engine.order_filled' AND market = 'BTC-PERP' ORDER BY seq`).map((r) => Number(r.seq)),
    );
  });

  it('backfill from the middle: since=N returns exactly the events after N', async () => {
    const mid = Math.floor(seeded.maxSeq / 2);
    const after = await walk(`/v1/events?since=${mid}`, 500, 'since', num('seq'));
    expect(after[0]!.seq).toBe(mid + 1);
    expect(after.length).toBe(seeded.maxSeq - mid);
  });
});
