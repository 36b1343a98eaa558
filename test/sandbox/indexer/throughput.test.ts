// Catch-up speed: the indexer replays a 40 000-event engine history over SSE into the database.
// The target is ≥ 10 000 events/s (about 15 000 measured alone on PostgreSQL); the assertion only
// catches order-of-magnitude regressions, since other suites share the 2-core CI machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { startIndexer } from '../../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

const party = (i: number): string => `t${i}::${i.toString(16).padStart(64, '0')}`;

describe('reference indexer throughput', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    db = await createTestDatabase();
    const core = engine.engine;
    for (let i = 0; i < 20; i++) core.deposit({ party: party(i), amount: '100000000' }, 'faucet');
    // Resting quotes crossed by market orders: placed + filled + cancelled/commit events.
    let n = 0;
    while (core.log.maxSeq < 40_000) {
      const maker = party(n % 20);
      const taker = party((n + 7) % 20);
      const price = String(60000 + (n % 50) * 10);
      core.placeOrder(maker, { market: 'BTC-PERP', side: n % 2 ? 'buy' : 'sell', type: 'limit', price, size: '0.01' });
      core.placeOrder(taker, { market: 'BTC-PERP', side: n % 2 ? 'sell' : 'buy', type: 'market', size: '0.005' });
      if (n % 50 === 0) core.commit();
      n++;
    }
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it('indexes a long history fast', async () => {
    const maxSeq = engine.engine.log.maxSeq;
    const started = performance.now();
    const indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken });
    try {
      await indexer.waitFor(maxSeq, 60_000);
      const seconds = (performance.now() - started) / 1000;
      const rate = Math.round(maxSeq / seconds);
      console.log(`[indexer throughput] ${maxSeq} events in ${seconds.toFixed(2)} s = ${rate} events/s (${db.kind}, largest batch ${indexer.stats().largestBatch})`);
      const [n] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events`;
      expect(n!.n).toBe(maxSeq);
      expect(rate).toBeGreaterThan(db.kind === 'postgres' ? 1500 : 500);
    } finally {
      await indexer.close();
    }
  }, 90_000);
});
