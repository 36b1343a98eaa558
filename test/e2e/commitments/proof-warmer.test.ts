// PROOF_BUILD_AHEAD (ADR 0382): the gateway builds the proofs of user batches as the chain records
// them, before any client asks, over a history traded on the reference engine and recorded by the
// reference indexer. What it keeps is byte for byte what a gateway that builds on request answers.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import postgres from 'postgres';
import { fileScope, testEngine, testGateway, testRecordedChain } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { ownPostgresAvailable, startOwnPostgres } from '../../support/own-postgres.js';
import type { TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { fundedClient } from '../../sandbox/engine/helpers.js';
import { eventually } from '../../support/eventually.js';

async function metric(gateway: TestGateway, name: string): Promise<number | null> {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec((await gateway.app.inject('/metrics')).body);
  return m ? Number(m[1]) : null;
}

const builtAhead = (gateway: TestGateway) => metric(gateway, 'bff_proofs_built_ahead_total');

async function recorded(db: TestDatabase): Promise<number> {
  return Number((await db.sql<Array<{ n: string }>>`SELECT count(*) AS n FROM user_batches WHERE batch_num IS NOT NULL`)[0]!.n);
}

/** Every page of a party's proofs, as the range route answers them. */
async function pages(gateway: TestGateway, party: string): Promise<string[]> {
  const out: string[] = [];
  for (let since: number | null = 0; since !== null; ) {
    const res: { statusCode: number; body: string; json(): unknown } = await gateway.app.inject(`/v1/users/${party}/user-batches/proofs?since=${since}&limit=2`);
    expect(res.statusCode).toBe(200);
    out.push(res.body);
    since = (res.json() as { nextCursor: number | null }).nextCursor;
  }
  return out;
}

describe('proofs built ahead', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let indexer: RunningIndexer;
  let ahead: TestGateway;
  let onRequest: TestGateway;
  let clients: Array<Awaited<ReturnType<typeof fundedClient>>>;
  const book = { market: 'BTC-PERP', type: 'limit' } as const;

  const stacks = fileScope();
  beforeAll(async () => {
    ({ engine, db, indexer } = await testRecordedChain(stacks));
    clients = await Promise.all(['ann', 'ben'].map((h) => fundedClient(engine.url, engine.adminToken, '100000', h)));
    const [ann, ben] = clients as [(typeof clients)[0], (typeof clients)[0]];
    for (let i = 0; i < 4; i++) {
      await ben.placeOrder({ ...book, side: 'sell', price: String(60000 + i), size: '0.1' });
      await ann.placeOrder({ ...book, side: 'buy', price: String(60000 + i), size: '0.1' });
      engine.engine.commit();
    }
    await indexer.waitFor(engine.engine.log.maxSeq);
    ahead = await testGateway(stacks, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
    onRequest = await testGateway(stacks, { DATABASE_URL: db.url, AUTH_DISABLED: 'true', PROOF_BUILD_AHEAD: 'false' });
  }, 60_000);

  it('at start, builds what the chain recorded before; the pages are the bytes a gateway building on request answers', async () => {
    const before = await recorded(db);
    expect(before).toBeGreaterThanOrEqual(8);
    await eventually(async () => (await builtAhead(ahead)) === before, { timeoutMs: 15_000, what: `${before} proofs built ahead` });
    expect(await builtAhead(onRequest)).toBeNull();
    for (const c of clients) expect(await pages(ahead, c.id)).toEqual(await pages(onRequest, c.id));
    // Nothing more was built: the pages were the kept answers.
    expect(await builtAhead(ahead)).toBe(before);
  });

  it('then follows the chain: a manifest recorded later is built within a turn or two', async () => {
    const [ann, ben] = clients as [(typeof clients)[0], (typeof clients)[0]];
    await ben.placeOrder({ ...book, side: 'sell', price: '61000', size: '0.2' });
    await ann.placeOrder({ ...book, side: 'buy', price: '61000', size: '0.2' });
    engine.engine.commit();
    await indexer.waitFor(engine.engine.log.maxSeq);
    const now = await recorded(db);
    await eventually(async () => (await builtAhead(ahead)) === now, { timeoutMs: 15_000, what: `${now} proofs built ahead` });
    for (const c of clients) expect(await pages(ahead, c.id)).toEqual(await pages(onRequest, c.id));
  });
});

describe.skipIf(!ownPostgresAvailable)('proofs built ahead across a database outage', () => {
  const stacks = fileScope();

  it('a gateway started while its database is down builds them once the database is back', async () => {
    const pg = await startOwnPostgres();
    stacks.onTestFinished(() => pg.destroy());
    const engine = await testEngine(stacks);
    const indexer = await startIndexer({ databaseUrl: pg.url, engineUrl: engine.url, adminToken: engine.adminToken });
    const [ann, ben] = await Promise.all(['ann', 'ben'].map((h) => fundedClient(engine.url, engine.adminToken, '100000', h)));
    for (let i = 0; i < 3; i++) {
      await ben!.placeOrder({ market: 'BTC-PERP', type: 'limit', side: 'sell', price: String(60000 + i), size: '0.1' });
      await ann!.placeOrder({ market: 'BTC-PERP', type: 'limit', side: 'buy', price: String(60000 + i), size: '0.1' });
      engine.engine.commit();
    }
    await indexer.waitFor(engine.engine.log.maxSeq);
    await indexer.close();
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const recorded = Number((await sql<Array<{ n: string }>>`SELECT count(*) AS n FROM user_batches WHERE batch_num IS NOT NULL`)[0]!.n);
    await sql.end();
    expect(recorded).toBeGreaterThanOrEqual(6);

    await pg.stop();
    const gateway = await testGateway(stacks, { DATABASE_URL: pg.url, AUTH_DISABLED: 'true' });
    // Its turns fail while the database is down (each read past the database deadline), counted, nothing built.
    await eventually(async () => ((await metric(gateway, 'bff_proofs_build_ahead_failures_total')) ?? 0) >= 2, { timeoutMs: 30_000, what: 'two turns failed' });
    expect(await builtAhead(gateway)).toBe(0);
    await pg.start();
    await eventually(async () => (await builtAhead(gateway)) === recorded, { timeoutMs: 20_000, what: `${recorded} proofs built once the database is back` });
  }, 90_000);
});
