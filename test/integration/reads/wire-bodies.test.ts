// The list routes write their JSON bodies from raw row bytes (src/db/json/). Two checks over seeded
// data plus rows chosen to hit every edge of that writer (escapes, control characters, non-ASCII,
// microsecond times, NULLs, jsonb numbers and keys a JS round trip changes):
//   1. byte equality with the object path: the same page read as decoded rows (the gateway's own
//      connection settings) and serialised by fast-json-stringify from the route's schema, which is
//      what the routes sent before;
//   2. every real body validates against the route's 200 schema in the served OpenAPI description,
//      with a standard JSON Schema validator (Ajv + ajv-formats).
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import pino from 'pino';
import type { TSchema } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';
import { Database } from '../../../src/db/database.js';
import { EMPTY_PAGE, type Page } from '../../../src/db/queries/page.js';
import { listFills } from '../../../src/db/queries/fills.js';
import { listOrders } from '../../../src/db/queries/orders.js';
import { listPositions } from '../../../src/db/queries/positions.js';
import { listTriggers } from '../../../src/db/queries/triggers.js';
import { listEvents } from '../../../src/db/queries/events.js';
import { listDeposits, listWithdrawals } from '../../../src/db/queries/collateral.js';
import { listBatches, listUserBatches, listUserBatchesOf } from '../../../src/db/queries/batches.js';
import { VERIFICATION_STATUSES, verifyManifests, verifyUserBatches, type VerificationStatus } from '../../../src/db/queries/verifications.js';
import { List } from '../../../src/http/schemas.js';
import { ByteWriter } from '../../../src/db/json/byte-writer.js';
import { ORDER_SHAPE } from '../../../src/db/queries/orders.js';
import * as S from '../../../src/http/reads/shapes.js';

let db: TestDatabase;
let gw: TestGateway;
let seeded: SeedResult;
let reference: Database;
let doc: Record<string, unknown>;
const ajv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS: its plugin is the module's default export.
const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (ajv: Ajv) => Ajv;
addFormats(ajv);

const WEIRD = `w-"quote" \\ back\nline\ttab\u0001ctl\u001f é 😀 \u2028`;
// The same without the packed rows' marker bytes (0x1e, 0x1f): written from the packed row itself.
const ESCAPES = WEIRD.replace('\u001f', '');
const P = `weird::${'ab'.repeat(32)}`;

beforeAll(async () => {
  db = await createTestDatabase();
  seeded = await seed(db.sql, { seed: 11, parties: 8, fills: 1_500, batchEvery: 200, copy: db.kind === 'postgres' });
  const s = seeded.maxSeq;
  const sql = db.sql;
  // One fill event of three legs with hostile text and times with microseconds (truncated, never rounded).
  await sql`INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl,
      new_balance, position_id, created_at) VALUES
    (${s + 1}, 0, ${`${s + 1}-0`}, ${WEIRD}, 'o-w', ${P}, 'BTC-PERP', 'buy', 'taker', 0.5, 65000, 0.1, -12.5, 10, 'pos-w', '2026-11-21 10:00:00.123956+00'),
    (${s + 1}, 1, ${`${s + 1}-1`}, 'm-w', 'o-x', ${P}, 'BTC-PERP', 'sell', 'maker', 0.5, 65000, 0, 0, 10, ${WEIRD}, '2026-11-21 10:00:00.9999+00'),
    (${s + 1}, 2, ${`${s + 1}-2`}, 'm-w', 'o-y', ${P}, 'BTC-PERP', 'sell', 'maker', 0.0000000001, 65000, 0, 0, 10, 'pos-y', '1999-01-01 00:00:00+00')`;
  await sql`INSERT INTO orders (order_id, party, market, side, type, tif, price, size, filled_size, avg_price, status,
      client_order_id, created_seq, updated_seq, created_at, updated_at, reduce_only) VALUES
    ('o-weird', ${P}, 'BTC-PERP', 'buy', 'limit', 'gtc', NULL, 1, 0, NULL, 'open', ${WEIRD}, ${s + 2}, ${s + 2}, '2026-11-21 10:00:00.5+00', '2026-11-21 10:00:01+00', true)`;
  const payload = { z: 1.5, a: '1.50', '10': 'ten', '2': [1, -2, 0, 12345678901234], nested: { s: WEIRD, e: {}, l: [] }, n: null, t: true };
  await sql`INSERT INTO events (seq, kind, ts, market, party, payload) VALUES
    (${s + 3}, 'engine.order_placed', '2026-11-21 10:00:02.000001+00', NULL, ${P}, ${sql.json(payload as never)}),
    (${s + 4}, 'engine.tick_start', '2026-11-21 10:00:03+00', 'BTC-PERP', NULL, ${sql.unsafe("'{\"x\": 1.50, \"y\": 1e3, \"big\": 123456789012345678901, \"neg\": -0}'::jsonb")}),
    (${s + 5}, 'engine.tick_start', '2026-11-21 10:00:04+00', NULL, NULL, '{"ok": "plain", "k": 7}'::jsonb)`;
  await sql`INSERT INTO deposits (seq, deposit_id, party, amount, source, tx_id, created_at) VALUES
    (${s + 6}, ${ESCAPES}, ${P}, 1, 'faucet', NULL, '2026-11-21 10:00:05.1+00'),
    (${s + 7}, 'd-empty', ${P}, 2, 'faucet', '', '2026-11-21 10:00:06+00')`;
  // Empty text (not NULL), a text needing escapes, a text holding the other marker byte.
  await sql`INSERT INTO orders (order_id, party, market, side, type, tif, price, size, filled_size, avg_price, status,
      client_order_id, created_seq, updated_seq, created_at, updated_at, reduce_only) VALUES
    ('ox-empty', ${P}, 'BTC-PERP', 'buy', 'limit', 'gtc', 1, 1, 0, NULL, 'open', '', ${s + 8}, ${s + 8}, '2026-11-21 10:00:07+00', '2026-11-21 10:00:07+00', false),
    ('ox-escapes', ${P}, 'BTC-PERP', 'sell', 'limit', 'gtc', 2, 1, 0, NULL, 'open', ${ESCAPES}, ${s + 8}, ${s + 8}, '2026-11-21 10:00:07+00', '2026-11-21 10:00:07+00', true),
    ('ox-rs', ${P}, 'BTC-PERP', 'sell', 'limit', 'gtc', 3, 1, 0, NULL, 'open', ${'rs\u001ers'}, ${s + 9}, ${s + 9}, '2026-11-21 10:00:08+00', '2026-11-21 10:00:08+00', false)`;
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
  reference = new Database(
    { databaseUrl: db.url, dbPoolMax: 2, dbConnectTimeoutS: 5, dbStatementTimeoutMs: 10_000 },
    pino({ level: 'silent' }),
  );
  doc = (await gw.app.inject('/docs/json')).json();
  ajv.addSchema({ ...doc, $id: 'openapi' });
}, 120_000);
afterAll(async () => {
  await reference?.close();
  await gw?.close();
  await db?.drop();
});

interface Case {
  url: string;
  /** The OpenAPI path of the route. */
  route: string;
  item: TSchema;
  /** The same page through the object path. */
  objects: (d: Database) => Promise<Page<unknown>>;
}

function cases(): Case[] {
  const party = seeded.parties[3]!;
  const mid = Math.floor(seeded.maxSeq / 2);
  const u = (p: string) => `/v1/users/${p}`;
  const r = (fn: (sql: never) => Promise<Page<unknown>>) => (d: Database) => d.read(EMPTY_PAGE, fn as never);
  return [
    { url: '/v1/fills?limit=100', route: '/v1/fills', item: S.Fill, objects: r((sql) => listFills(sql, { limit: 100 })) },
    { url: '/v1/fills?limit=1', route: '/v1/fills', item: S.Fill, objects: r((sql) => listFills(sql, { limit: 1 })) },
    { url: `/v1/fills?limit=7&before=${mid}&market=ETH-PERP`, route: '/v1/fills', item: S.Fill, objects: r((sql) => listFills(sql, { limit: 7, before: mid, market: 'ETH-PERP' })) },
    { url: `${u(party)}/fills?limit=1000`, route: '/v1/users/{party}/fills', item: S.Fill, objects: r((sql) => listFills(sql, { party, limit: 1000 })) },
    { url: '/v1/orders?limit=100', route: '/v1/orders', item: S.Order, objects: r((sql) => listOrders(sql, { limit: 100 })) },
    { url: '/v1/orders?status=open&limit=3', route: '/v1/orders', item: S.Order, objects: r((sql) => listOrders(sql, { statuses: ['open'], limit: 3 })) },
    { url: `${u(party)}/positions?status=all&limit=1000`, route: '/v1/users/{party}/positions', item: S.Position, objects: r((sql) => listPositions(sql, { party, status: 'all', limit: 1000 })) },
    { url: `${u(party)}/positions?status=closed&limit=1`, route: '/v1/users/{party}/positions', item: S.Position, objects: r((sql) => listPositions(sql, { party, status: 'closed', limit: 1 })) },
    { url: `${u(party)}/triggers?limit=1000`, route: '/v1/users/{party}/triggers', item: S.Trigger, objects: r((sql) => listTriggers(sql, { party, limit: 1000 })) },
    { url: '/v1/events?limit=1000', route: '/v1/events', item: S.EventEnvelope, objects: r((sql) => listEvents(sql, { limit: 1000 })) },
    { url: `/v1/events?since=${seeded.maxSeq - 10}&limit=100`, route: '/v1/events', item: S.EventEnvelope, objects: r((sql) => listEvents(sql, { since: seeded.maxSeq - 10, limit: 100 })) },
    { url: `/v1/events?user=${party}&since=${mid}&limit=50`, route: '/v1/events', item: S.EventEnvelope, objects: r((sql) => listEvents(sql, { party, since: mid, limit: 50 })) },
    { url: '/v1/deposits?limit=100', route: '/v1/deposits', item: S.Deposit, objects: r((sql) => listDeposits(sql, { limit: 100 })) },
    { url: `/v1/orders?before=${seeded.maxSeq + 9}&limit=2`, route: '/v1/orders', item: S.Order, objects: r((sql) => listOrders(sql, { before: seeded.maxSeq + 9, limit: 2 })) },
    { url: '/v1/withdrawals?limit=100', route: '/v1/withdrawals', item: S.Withdrawal, objects: r((sql) => listWithdrawals(sql, { limit: 100 })) },
    { url: `${u(party)}/withdrawals?limit=2`, route: '/v1/users/{party}/withdrawals', item: S.Withdrawal, objects: r((sql) => listWithdrawals(sql, { party, limit: 2 })) },
    { url: `${u(party)}/deposits`, route: '/v1/users/{party}/deposits', item: S.Deposit, objects: r((sql) => listDeposits(sql, { party, limit: 100 })) },
    { url: '/v1/batches?limit=3', route: '/v1/batches', item: S.Batch, objects: r((sql) => listBatches(sql, { limit: 3 })) },
    { url: '/v1/user-batches?limit=5', route: '/v1/user-batches', item: S.UserBatch, objects: r((sql) => listUserBatches(sql, { limit: 5 })) },
    { url: `${u(party)}/user-batches?limit=1000`, route: '/v1/users/{party}/user-batches', item: S.UserBatch, objects: r((sql) => listUserBatchesOf(sql, { party, limit: 1000 })) },
    { url: '/v1/verifications/user-batches?limit=100', route: '/v1/verifications/user-batches', item: S.UserBatchVerification, objects: r((sql) => verifyUserBatches(sql, { limit: 100 })) },
    ...VERIFICATION_STATUSES.map((status): Case => ({ url: `/v1/verifications/user-batches?status=${status}&limit=20`, route: '/v1/verifications/user-batches', item: S.UserBatchVerification, objects: truth('user-batches', status, 20) })),
    ...VERIFICATION_STATUSES.map((status): Case => ({ url: `/v1/verifications/manifests?status=${status}&limit=3`, route: '/v1/verifications/manifests', item: S.ManifestVerification, objects: truth('manifests', status, 3) })),
    { url: '/v1/verifications/manifests?limit=2', route: '/v1/verifications/manifests', item: S.ManifestVerification, objects: r((sql) => verifyManifests(sql, { limit: 2 })) },
  ];
}

/**
 * A status-filtered verification page as the database says it, without the claim-status index: every
 * claim of the family, filtered here (pending pages are written from the index's memory).
 */
function truth(family: 'user-batches' | 'manifests', status: VerificationStatus, limit: number) {
  return async (d: Database): Promise<Page<unknown>> => {
    const all = await d.read(EMPTY_PAGE as Page<{ status: string; engineSeq: number }>, (sql) =>
      family === 'user-batches' ? verifyUserBatches(sql, { limit: 1_000_000 }) : verifyManifests(sql, { limit: 1_000_000 }));
    const items = all.items.filter((i) => i.status === status);
    return { items: items.slice(0, limit), nextCursor: items.length > limit ? items[limit - 1]!.engineSeq : null };
  };
}

function openApiValidator(route: string) {
  const pointer = `/paths/${route.replaceAll('~', '~0').replaceAll('/', '~1')}/get/responses/200/content/application~1json/schema`;
  return ajv.compile({ $ref: `openapi#${pointer}` });
}

describe('list bodies written from raw rows', () => {
  it('equal, byte for byte, the object path serialised by the route schema', async () => {
    let hostile = 0;
    // Twice: the first read of a fill, event or deposit page fetches its rows and keeps them by
    // version (db/json/row-cache.ts), the second is written from what was kept.
    for (const round of ['fetched', 'kept']) {
      for (const c of cases()) {
        const res = await gw.app.inject(c.url);
        expect(res.statusCode, c.url).toBe(200);
        expect(res.headers['content-type'], c.url).toBe('application/json; charset=utf-8');
        const expected = fastJson(List(c.item) as never)(await c.objects(reference));
        expect(res.body, `${round}: ${c.url}`).toBe(expected);
        if (res.body.includes('\\u0001ctl')) hostile++;
      }
    }
    expect(gw.app.db.rows.stats().hits).toBeGreaterThan(1000);
    expect(hostile).toBeGreaterThan(4); // the edge rows were on some of those pages
    // Every status has claims in the seed (so the pages above are not all empty).
    for (const status of VERIFICATION_STATUSES) {
      expect((await gw.app.inject(`/v1/verifications/user-batches?status=${status}&limit=1`)).json().items, status).toHaveLength(1);
    }
  });

  it('the edge values come out as JSON.stringify prints them', async () => {
    const events = (await gw.app.inject(`/v1/events?since=${seeded.maxSeq + 2}&limit=10`)).json() as { items: Array<Record<string, unknown>> };
    expect(events.items.map((e) => e.payload)).toEqual([
      { z: 1.5, a: '1.50', '10': 'ten', '2': [1, -2, 0, 12345678901234], nested: { s: WEIRD, e: {}, l: [] }, n: null, t: true },
      { x: 1.5, y: 1000, big: 123456789012345680000, neg: 0 },
      { ok: 'plain', k: 7 },
    ]);
    const fills = (await gw.app.inject(`/v1/fills?limit=3`)).json() as { items: Array<Record<string, unknown>> };
    expect(fills.items.map((f) => [f.matchId, f.positionId, f.createdAt])).toEqual([
      [WEIRD, 'pos-w', '2026-11-21T10:00:00.123Z'],
      ['m-w', WEIRD, '2026-11-21T10:00:00.999Z'],
      ['m-w', 'pos-y', '1999-01-01T00:00:00.000Z'],
    ]);
  });

  it('come from rows packed into one column, split exactly; a text holding a marker byte is detected', async () => {
    // The statement the routes send (packed-row.ts), on a connection set up as the gateway's.
    const sql = reference.sql!;
    const packed = await sql.unsafe(`SELECT ${ORDER_SHAPE.packedSelect('created_seq')} FROM orders WHERE order_id IN ('o-weird', 'ox-empty', 'ox-escapes', 'ox-rs') ORDER BY order_id`).raw();
    const columns = await sql.unsafe(`SELECT ${ORDER_SHAPE.columns.map((c) => `"${c}"`).join(', ')} FROM orders WHERE order_id IN ('o-weird', 'ox-empty', 'ox-escapes', 'ox-rs') ORDER BY order_id`).raw();
    const w = new ByteWriter();
    const results = packed.map((row, i) => {
      w.reset();
      const ok = ORDER_SHAPE.writePacked(w, row[1] as Buffer);
      const fromPacked = w.bytes().toString('utf8');
      w.reset();
      ORDER_SHAPE.write(w, columns[i] as never);
      return [ok, ok ? fromPacked === w.bytes().toString('utf8') : null];
    });
    // o-weird (0x1f in its text), ox-empty, ox-escapes, ox-rs (0x1e in its text)
    expect(results).toEqual([[false, null], [true, true], [true, true], [false, null]]);
    // A page with such a row is read again column by column (byte equality above); one without is
    // written from its packed rows, escapes and empty text included.
    const page = (await gw.app.inject(`/v1/orders?before=${seeded.maxSeq + 9}&limit=2`)).json() as { items: Array<Record<string, unknown>> };
    expect(page.items.map((o) => [o.orderId, o.clientOrderId, o.avgPrice, o.reduceOnly])).toEqual([
      ['ox-empty', '', null, false],
      ['ox-escapes', ESCAPES, null, true],
    ]);
  });

  it('validate against the OpenAPI 200 schema of their route (Ajv, with formats)', async () => {
    for (const c of cases()) {
      const validate = openApiValidator(c.route);
      const res = await gw.app.inject(c.url);
      const ok = validate(res.json());
      expect(validate.errors ?? [], c.url).toEqual([]);
      expect(ok).toBe(true);
    }
    // The validator does reject a body off its schema (so the check above can fail).
    const validate = openApiValidator('/v1/fills');
    expect(validate({ items: [{ seq: 1 }], nextCursor: null })).toBe(false);
  });
});
