// Every read's SQL is served by an index: the exact statements the query functions send (captured
// through the driver's debug hook) are EXPLAINed over a seeded data set large enough that the
// planner prefers indexes on its own (no `enable_seqscan` games), and no plan may hold a Seq Scan
// of a big table.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';
import { listVaults, vaultByOperator, firstTwoVaults } from '../../../src/db/queries/vaults.js';
import { listFillsJson } from '../../../src/db/queries/fills.js';
import { listOrdersJson } from '../../../src/db/queries/orders.js';
import { listPositionsJson } from '../../../src/db/queries/positions.js';
import { listTriggersJson } from '../../../src/db/queries/triggers.js';
import { listEventsJson } from '../../../src/db/queries/events.js';
import { listDepositsJson } from '../../../src/db/queries/collateral.js';
import { RowCache } from '../../../src/db/json/row-cache.js';
import { listUserBatchesJson } from '../../../src/db/queries/batches.js';
import { listDeposits, listWithdrawals, withdrawalNonce } from '../../../src/db/queries/collateral.js';
import { batchByNum, listBatches, listUserBatches, listUserBatchesOf } from '../../../src/db/queries/batches.js';
import { existingOrderIds, listOrders } from '../../../src/db/queries/orders.js';
import { balanceOf, listFills } from '../../../src/db/queries/fills.js';
import { lastTrades, listTrades } from '../../../src/db/queries/trades.js';
import { listPositions } from '../../../src/db/queries/positions.js';
import { listTriggers } from '../../../src/db/queries/triggers.js';
import { claimHead, claimsAfter, claimsOnChain, verificationRows, verifyManifests, verifyUserBatches } from '../../../src/db/queries/verifications.js';
import { eventsAfter, listEvents } from '../../../src/db/queries/events.js';
import { listMarketRows, minuteStats, statsHeads } from '../../../src/db/queries/markets.js';
import { candlePage, headTime } from '../../../src/db/queries/candle-history.js';
import { eventsHead, takerLegsBefore } from '../../../src/db/queries/candles.js';
import { loadBookSeed } from '../../../src/db/queries/book-seed.js';
import { sessionById } from '../../../src/db/queries/sessions.js';
import { faucetFactsOf } from '../../../src/db/queries/faucet.js';
import { INTERVAL_MS } from '../../../src/projections/candles.js';
import { CANDLE_INTERVALS } from '../../../src/contracts/frame.js';
import { DEFAULTS } from '../../../sandbox/seed/index.js';

const FILLS = Number(process.env.EXPLAIN_FILLS ?? 200_000);
const seqTime = (seq: number): number => DEFAULTS.startMs + seq * 250;
const BIG = 10_000;

let db: TestDatabase;
let seeded: SeedResult;
let captured: Array<{ query: string; params: unknown[] }> = [];
let reader: postgres.Sql;

beforeAll(async () => {
  db = await createTestDatabase();
  seeded = await seed(db.sql, { seed: 3, parties: 200, fills: FILLS, batchEvery: 2_000, copy: db.kind === 'postgres' });
  await db.sql`ANALYZE`;
  // The same driver settings as the gateway, plus a debug hook that records each statement.
  reader = postgres(db.url, {
    max: 1,
    onnotice: () => {},
    transform: { column: { from: postgres.toCamel } },
    debug: (_conn, query, params) => {
      if (!/^\s*EXPLAIN/i.test(query)) captured.push({ query, params: params as unknown[] });
    },
  });
}, 600_000);
afterAll(async () => {
  await reader?.end({ timeout: 2 });
  await db?.drop();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function seqScans(node: PlanNode, out: string[] = []): string[] {
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name']) out.push(node['Relation Name']);
  for (const child of node.Plans ?? []) seqScans(child, out);
  return out;
}

describe(`every read over ${FILLS} fills`, () => {
  it('has no Seq Scan of a big table', async () => {
    const party = seeded.parties[17]!;
    const sql = reader;
    const middle = Math.floor(seeded.maxSeq / 2);
    const reads: Array<[string, () => Promise<unknown>]> = [
      ['vaults', () => listVaults(sql)],
      ['vault', () => vaultByOperator(sql, seeded.vaultOperator)],
      ['vault (only)', () => firstTwoVaults(sql)],
      ['deposits', () => listDeposits(sql, { limit: 100, before: middle })],
      ['deposits of user', () => listDeposits(sql, { party, limit: 100 })],
      ['withdrawals by status', () => listWithdrawals(sql, { status: 'requested', limit: 100 })],
      ['withdrawals of user', () => listWithdrawals(sql, { party, status: 'approved', limit: 100 })],
      ['withdrawal counter', () => withdrawalNonce(sql, party)],
      ['batches', () => listBatches(sql, { limit: 100, before: 50 })],
      ['batch', () => batchByNum(sql, 3)],
      ['user batches', () => listUserBatches(sql, { limit: 100 })],
      ['user batches (cursor)', () => listUserBatches(sql, { limit: 100, before: Math.max(2, Math.floor(seeded.batches / 2)) })],
      ['user batches, limit inside a batch', () => listUserBatches(sql, { limit: 1 })],
      ['user batches of user', () => listUserBatchesOf(sql, { party, since: 3, limit: 100 })],
      ['orders', () => listOrders(sql, { limit: 100, before: middle })],
      ['orders by status', () => listOrders(sql, { statuses: ['cancelled'], limit: 100 })],
      ['orders by market', () => listOrders(sql, { market: 'SOL-PERP', limit: 100 })],
      ['orders of user', () => listOrders(sql, { party, limit: 100 })],
      ['orders of user, non-terminal', () => listOrders(sql, { party, statuses: ['open', 'partially_filled'], limit: 100 })],
      ['orders of user by market and status', () => listOrders(sql, { party, market: 'BTC-PERP', statuses: ['filled'], limit: 100 })],
      ['orders by id', () => existingOrderIds(sql, ['o-1', 'o-2'])],
      ['fills', () => listFills(sql, { limit: 100 })],
      ['fills (cursor)', () => listFills(sql, { limit: 1000, before: middle })],
      ['fills by market', () => listFills(sql, { market: 'ETH-PERP', limit: 100 })],
      ['trades', () => listTrades(sql, { market: 'ETH-PERP', limit: 100 })],
      ['trades (cursor)', () => listTrades(sql, { market: 'BTC-PERP', before: middle, limit: 500 })],
      ['last trade per market', () => lastTrades(sql, ['BTC-PERP', 'ETH-PERP', 'SOL-PERP'])],
      // limit 1 always lands inside a fill event (2+ legs): the same-seq and "more beyond" probes run too.
      ['fills, limit inside an event', () => listFills(sql, { limit: 1, before: middle })],
      ['fills by market, limit inside an event', () => listFills(sql, { market: 'SOL-PERP', limit: 1 })],
      ['fills of user', () => listFills(sql, { party, limit: 100 })],
      ['fills of user by market', () => listFills(sql, { party, market: 'BTC-PERP', limit: 100, before: middle })],
      ['balance', () => balanceOf(sql, party)],
      ['positions open', () => listPositions(sql, { party, status: 'open', limit: 100 })],
      ['positions closed', () => listPositions(sql, { party, status: 'closed', limit: 100 })],
      ['positions all', () => listPositions(sql, { party, status: 'all', market: 'ETH-PERP', limit: 100 })],
      ['triggers', () => listTriggers(sql, { party, limit: 100 })],
      ['triggers by status', () => listTriggers(sql, { party, status: 'fired', market: 'BTC-PERP', limit: 100 })],
['verify user batches', () => verifyUserBatches(sql, { limit: 100 })],
      ['verify user batches of user', () => verifyUserBatches(sql, { party, limit: 100 })],
      ['verify manifests', () => verifyManifests(sql, { limit: 100 })],
      ['claim index: head', () => claimHead(sql, 'user-batches')],
      ['claim index: growth', () => claimsAfter(sql, 'user-batches', middle, 1_000)],
      ['claim index: manifests growth', () => claimsAfter(sql, 'manifests', 0, 1_000)],
      ['claim index: pending re-check', async () => claimsOnChain(sql, 'user-batches', (await claimsAfter(sql, 'user-batches', middle, 50)).slice(0, 3))],
      ['claim index: manifests pending re-check', async () => claimsOnChain(sql, 'manifests', (await claimsAfter(sql, 'manifests', 0, 50)).slice(0, 3))],
      ['claim index: rows of a page', () => verificationRows(sql, 'manifests', [middle, seeded.maxSeq])],
      ['events', () => listEvents(sql, { since: middle, limit: 1000 })],
      ['events by kind', () => listEvents(sql, { kind: 'engine.order_cancelled', since: 0, limit: 100 })],
      // A user's events: its own (events (party, seq)) and the fill events it has a leg in (fills (party, seq desc)).
      ['events of user', () => listEvents(sql, { party, since: 0, limit: 100 })],
      ['events of user, no cursor', () => listEvents(sql, { party, limit: 1000 })],
      ['events of user (cursor)', () => listEvents(sql, { party, since: middle, limit: 1000 })],
      ['events of user, fills only', () => listEvents(sql, { party, kind: 'engine.order_filled', since: middle, limit: 100 })],
      ['events of user by market', () => listEvents(sql, { party, market: 'ETH-PERP', since: 0, limit: 100 })],
      ['events by market', () => listEvents(sql, { market: 'SOL-PERP', since: middle, limit: 100 })],
      // The seed stamps seq n at startMs + n × 250 ms.
      ['markets (mirror table)', () => listMarketRows(sql)],
      ['market stats: heads', () => statsHeads(sql)],
      ['market stats: first read of a day', () => minuteStats(sql, { fromIso: new Date(seqTime(seeded.maxSeq) - 86_400_000).toISOString(), upToSeq: seeded.maxSeq })],
      ['market stats: window from the middle', () => minuteStats(sql, { fromIso: new Date(seqTime(middle)).toISOString(), upToSeq: seeded.maxSeq })],
      ['market stats: a refresh', () => minuteStats(sql, { fromIso: new Date(seqTime(middle)).toISOString(), afterSeq: seeded.maxSeq - 50, upToSeq: seeded.maxSeq })],
      ['market stats: the oldest minute', () => minuteStats(sql, { fromIso: new Date(seqTime(middle)).toISOString(), toIso: new Date(seqTime(middle) + 60_000).toISOString(), upToSeq: seeded.maxSeq })],
      ...CANDLE_INTERVALS.map((interval): [string, () => Promise<unknown>] => [
        `candles ${interval}, newest page`,
        () => candlePage(sql, { market: 'ETH-PERP', lengthMs: INTERVAL_MS[interval], limit: 100 }),
      ]),
      ...CANDLE_INTERVALS.map((interval): [string, () => Promise<unknown>] => [
        `candles ${interval}, window in the middle`,
        () => candlePage(sql, { market: 'BTC-PERP', lengthMs: INTERVAL_MS[interval], fromMs: seqTime(middle) - 40 * INTERVAL_MS[interval], toMs: seqTime(middle), limit: 20 }),
      ]),
      ['candles: engine time', () => headTime(sql)],
      ['candle rebuild: head', () => eventsHead(sql)],
      ['candle rebuild: a page of taker legs', () => takerLegsBefore(sql, middle, 5_000)],
      ['order book seed (one market, order by order)', () => loadBookSeed(sql, 'BTC-PERP', middle)],
      ['session lookup', () => sessionById(sql, 'no-such-session')],
      ['event store', () => eventsAfter(sql, middle, 1_000)],
      ['faucet facts', () => faucetFactsOf(sql, party)],
      // What the list routes send: the same pages with each row packed into one column (src/db/json/packed-row.ts).
      ['fills, packed', () => listFillsJson(sql, { limit: 100 })],
      ['fills of user by market, packed, limit inside an event', () => listFillsJson(sql, { party, market: 'BTC-PERP', limit: 1 })],
      ['orders by status, packed', () => listOrdersJson(sql, { statuses: ['cancelled'], limit: 100 })],
      ['positions all, packed', () => listPositionsJson(sql, { party, status: 'all', limit: 100 })],
      ['triggers, packed', () => listTriggersJson(sql, { party, limit: 100 })],
      ['events, packed', () => listEventsJson(sql, { since: middle, limit: 100 })],
      ['events of user, packed', () => listEventsJson(sql, { party, since: middle, limit: 100 })],
      ['deposits, packed', () => listDepositsJson(sql, { limit: 100, before: middle })],
      ['user batches, packed', () => listUserBatchesJson(sql, { limit: 100 })],
      // Kept rows (row-cache.ts), a fresh cache each: the page's keys and versions, then the rows fetched by key.
      ['fills, kept rows', () => listFillsJson(sql, { limit: 100 }, new RowCache(1 << 20))],
      ['fills of user by market, kept rows', () => listFillsJson(sql, { party, market: 'BTC-PERP', limit: 1 }, new RowCache(1 << 20))],
      ['events, kept rows', () => listEventsJson(sql, { since: middle, limit: 100 }, new RowCache(1 << 20))],
      ['events of user, kept rows', () => listEventsJson(sql, { party, since: middle, limit: 100 }, new RowCache(1 << 20))],
      ['deposits, kept rows', () => listDepositsJson(sql, { limit: 100, before: middle }, new RowCache(1 << 20))],
    ];
    const big = new Set(
      (await db.sql<{ relname: string }[]>`
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ${db.schema} AND c.relkind = 'r' AND c.reltuples > ${BIG}`).map((r) => r.relname),
    );
    expect([...big].sort()).toEqual(expect.arrayContaining(['events', 'fills', 'orders']));
    const failures: string[] = [];
    let explained = 0;
    for (const [name, read] of reads) {
      captured = [];
      await read();
      expect(captured.length, name).toBeGreaterThan(0);
      for (const { query, params } of captured) {
        const [row] = await reader.unsafe(`EXPLAIN (FORMAT JSON) ${query}`, params as never[]);
        const plan = (Object.values(row as object)[0] as Array<{ Plan: PlanNode }>)[0]!.Plan;
        explained++;
        const scans = seqScans(plan).filter((t) => big.has(t));
        if (scans.length) failures.push(`${name}: Seq Scan on ${scans.join(', ')}\n${query.replace(/\s+/g, ' ')}`);
      }
    }
    expect(failures).toEqual([]);
    captured = [];
    await listEvents(sql, { party, since: 0, limit: 100 });
    expect(captured.map((c) => c.query).join('\n')).toMatch(/FROM fills/);
    expect(explained).toBeGreaterThanOrEqual(reads.length);
  }, 120_000);
});
