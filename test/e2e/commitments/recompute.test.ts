// Every root the chain recorded can be recomputed from GET /v1/events alone. The verifier
// (test/support/independent-verifier.ts) is written from the scheme's text and shares no code with
// the reference engine, the seed generator or the gateway; it replays the events of the whole
// history and its user batches and manifests are compared with the chain tables (user_batches,
// batches) and with the engine's claims. Two histories: the seed generator's, and one traded on
// the reference engine through the reference indexer (flips, self-trades, withdrawals, triggers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import type { RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { fileScope, testGateway, testRecordedChain } from '../../support/stacks.js';
import { audit, type Envelope } from '../../support/independent-verifier.js';
import { fundedClient } from '../../sandbox/engine/helpers.js';

async function allEvents(gateway: TestGateway): Promise<Envelope[]> {
  const out: Envelope[] = [];
  let since = 0;
  for (;;) {
    const res = await gateway.app.inject({ method: 'GET', url: `/v1/events?since=${since}&limit=1000` });
    expect(res.statusCode).toBe(200);
    const page = res.json() as { items: Envelope[]; nextCursor: number | null };
    out.push(...page.items);
    if (page.nextCursor === null) return out;
    since = page.nextCursor;
  }
}

interface ChainUserBatch { party: string; userSeq: number; root: string; prevRoot: string; eventCount: number; batchNum: number | null }
interface ChainBatch { batchNum: number; root: string; prevRoot: string; userBatchCount: number; firstSeq: number; lastSeq: number }

async function chain(db: TestDatabase): Promise<{ users: ChainUserBatch[]; batches: ChainBatch[] }> {
  const users = await db.sql<ChainUserBatch[]>`
    SELECT party, user_seq::int AS "userSeq", root, prev_root AS "prevRoot", event_count AS "eventCount", batch_num::int AS "batchNum"
    FROM user_batches ORDER BY batch_num, party`;
  const batches = await db.sql<ChainBatch[]>`
    SELECT batch_num::int AS "batchNum", root, prev_root AS "prevRoot", user_batch_count AS "userBatchCount",
           first_seq::int AS "firstSeq", last_seq::int AS "lastSeq"
    FROM batches ORDER BY batch_num`;
  return { users: [...users], batches: [...batches] };
}

const key = (party: string, userSeq: number) => `${party}#${userSeq}`;

describe('roots recomputed from GET /v1/events (seed generator history)', () => {
  let db: TestDatabase;
  let gateway: TestGateway;
  let seeded: SeedResult;

  beforeAll(async () => {
    db = await createTestDatabase();
    seeded = await seed(db.sql, { seed: 7, parties: 12, fills: 1_500, batchEvery: 300, copy: db.kind === 'postgres' });
    gateway = await startGateway({ DATABASE_URL: db.url });
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });

  it('every chain user root and manifest root equals the recomputed one, except the one deliberate incident', async () => {
    const events = await allEvents(gateway);
    expect(events).toHaveLength(seeded.maxSeq);
    const audited = audit(events);
    const { users, batches } = await chain(db);
    expect(users.length).toBeGreaterThan(20);
    const byKey = new Map(audited.userBatches.map((u) => [key(u.party, u.userSeq), u]));
    const wrong: string[] = [];
    for (const row of users) {
      const mine = byKey.get(key(row.party, row.userSeq));
      expect(mine, key(row.party, row.userSeq)).toBeDefined();
      expect({ prevRoot: row.prevRoot, eventCount: row.eventCount }).toEqual({ prevRoot: mine!.prevRoot, eventCount: mine!.eventCount });
      if (row.root !== mine!.root) wrong.push(key(row.party, row.userSeq));
    }
    // The seed writes exactly one chain row that disagrees with the events (the tampered incident).
    expect(wrong).toEqual([key(seeded.mismatch!.party, seeded.mismatch!.userSeq)]);
    // Fill events are in the batches of the parties with a leg.
    expect(audited.userBatches.some((u) => u.seqs.some((s) => events[s - 1]!.kind === 'engine.order_filled'))).toBe(true);
    // Manifests: every chain row recomputed (the last manifest is claimed but not on chain yet).
    expect(batches).toHaveLength(audited.manifests.length - 1);
    for (const b of batches) expect(b).toEqual(audited.manifests[b.batchNum - 1]);
  });

  it("every engine claim equals the recomputed batch", async () => {
    const events = await allEvents(gateway);
    const audited = audit(events);
    const claims = events.filter((e) => e.kind === 'engine.user_batch_committed');
    expect(claims.map((c) => ({ party: c.party, ...c.payload }))).toEqual(
      audited.userBatches.map((u) => ({ party: u.party, userSeq: u.userSeq, root: u.root, prevRoot: u.prevRoot, eventCount: u.eventCount })),
    );
    const manifests = events.filter((e) => e.kind === 'outbound.batch_committed').map((e) => e.payload);
    expect(manifests).toEqual(audited.manifests);
  });
});

describe('roots recomputed from GET /v1/events (reference engine and indexer)', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let indexer: RunningIndexer;
  let gateway: TestGateway;
  const parties = { ann: '', ben: '', cat: '' };

  // Closed last started first: the gateway, the indexer, the engine, the database.
  const file = fileScope();
  beforeAll(async () => {
    ({ engine, db, indexer } = await testRecordedChain(file));
    const [ann, ben, cat] = await Promise.all(['ann', 'ben', 'cat'].map((h) => fundedClient(engine.url, engine.adminToken, '100000', h)));
    Object.assign(parties, { ann: ann!.id, ben: ben!.id, cat: cat!.id });
    const book = { market: 'BTC-PERP', type: 'limit' } as const;
    engine.engine.commit();
    // ann buys from ben; then ann sells through zero into cat's bid (two legs for ann in one fill).
    await ben!.placeOrder({ ...book, side: 'sell', price: '60000', size: '0.5' });
    await ann!.placeOrder({ ...book, side: 'buy', price: '60000', size: '0.5' });
    engine.engine.commit();
    await cat!.placeOrder({ ...book, side: 'buy', price: '61000', size: '0.8' });
    await ann!.placeOrder({ ...book, side: 'sell', price: '61000', size: '0.8' });
    // A self-trade: ben is maker and taker of one match (one event in ben's batch).
    await ben!.placeOrder({ ...book, side: 'sell', price: '62000', size: '0.1' });
    await ben!.placeOrder({ ...book, side: 'buy', price: '62000', size: '0.1' });
    await ann!.tpsl({ market: 'BTC-PERP', sl: { triggerPrice: '70000' } });
    await cat!.withdraw('5');
    engine.engine.tick();
    engine.engine.commit();
    // Events after the last commit: claimed by nobody yet.
    await ann!.placeOrder({ ...book, side: 'buy', price: '50000', size: '0.01' });
    await indexer.waitFor(engine.engine.log.maxSeq);
    gateway = await testGateway(file, { DATABASE_URL: db.url });
  }, 60_000);

  it('the chain tables hold exactly the recomputed user batches and manifests', async () => {
    const events = await allEvents(gateway);
    expect(events).toHaveLength(engine.engine.log.maxSeq);
    const audited = audit(events);
    const { users, batches } = await chain(db);
    const sortedAudit = [...audited.userBatches].sort((a, b) => a.userSeq - b.userSeq || (a.party < b.party ? -1 : 1));
    expect(users.map(({ batchNum: _b, ...u }) => u).sort((a, b) => a.userSeq - b.userSeq || (a.party < b.party ? -1 : 1))).toEqual(
      sortedAudit.map(({ seqs: _s, ...u }) => u),
    );
    expect(batches).toEqual(audited.manifests);
    expect(batches).toHaveLength(3);
    // The flip gives ann two legs in one fill; the fill is once in her batch. The self-trade once in ben's.
    const fillSeqs = new Set(events.filter((e) => e.kind === 'engine.order_filled').map((e) => e.seq));
    expect(fillSeqs.size).toBe(3);
    const fillsIn = (party: string) => audited.userBatches.filter((u) => u.party === party).flatMap((u) => u.seqs.filter((s) => fillSeqs.has(s)));
    expect(fillsIn(parties.ann)).toHaveLength(2);
    expect(fillsIn(parties.ben)).toHaveLength(2);
    expect(fillsIn(parties.cat)).toHaveLength(1);
    for (const u of audited.userBatches) expect(new Set(u.seqs).size).toBe(u.seqs.length);
  });
});
