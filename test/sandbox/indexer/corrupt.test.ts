// The corrupt-root settings make the chain record disagree with the engine's claim for exactly one
// user batch and one manifest, and the gateway's verification routes report those as mismatches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { fundedClient } from '../engine/helpers.js';

describe('INDEXER_CORRUPT_USER_BATCH / INDEXER_CORRUPT_BATCH', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let indexer: RunningIndexer;
  let gateway: TestGateway;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    db = await createTestDatabase();
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, corruptUserBatch: 2, corruptBatch: 2 });
    // Three parties → three user batches in manifest 1; two more in manifest 2.
    const clients = [];
    for (const hint of ['ann', 'ben', 'cat']) clients.push(await fundedClient(engine.url, engine.adminToken, '100000', hint));
    engine.engine.commit();
    await clients[0]!.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', price: '65000', size: '0.01' });
    await clients[1]!.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01' });
    engine.engine.commit();
    await indexer.waitFor(engine.engine.log.maxSeq);
    gateway = await startGateway({ DATABASE_URL: db.url });
  });
  afterAll(async () => {
    await gateway?.close();
    await indexer?.close();
    await db?.drop();
  });

  it('reports exactly the corrupted user batch as a mismatch', async () => {
    const claims = await db.sql<Array<{ party: string; userSeq: number; root: string }>>`
      SELECT party, (payload->>'userSeq')::int AS "userSeq", payload->>'root' AS root FROM events
      WHERE kind = 'engine.user_batch_committed' ORDER BY seq`;
    expect(claims).toHaveLength(5);
    const second = claims[1]!;
    const res = await gateway.app.inject({ method: 'GET', url: '/v1/verifications/user-batches?status=mismatch' });
    expect(res.statusCode).toBe(200);
    const items = res.json().items as Array<Record<string, unknown>>;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ party: second.party, userSeq: second.userSeq, engineRoot: second.root, status: 'mismatch' });
    expect(items[0]!.chainRoot).not.toBe(second.root);
    const matches = await gateway.app.inject({ method: 'GET', url: '/v1/verifications/user-batches?status=match' });
    expect(matches.json().items).toHaveLength(4);
  });

  it('reports exactly the corrupted manifest as a mismatch', async () => {
    const res = await gateway.app.inject({ method: 'GET', url: '/v1/verifications/manifests' });
    expect(res.statusCode).toBe(200);
    const items = res.json().items as Array<{ batchNum: number; status: string }>;
    expect(items.map((i) => [i.batchNum, i.status])).toEqual([
      [2, 'mismatch'],
      [1, 'match'],
    ]);
  });
});
