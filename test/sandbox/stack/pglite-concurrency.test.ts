// The local stack's embedded database under the stack's real load: the indexer writing batches
// (one simple-protocol message each) while a pooled, prepared-statement client (the gateway's
// driver settings) reads concurrently over the PGlite socket server. Every read must get its own
// answer (no crossed portals) and never see half a batch (events without their fills).
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../sandbox/pglite-server.js';
import { startEngine, type RunningEngine } from '../../../sandbox/engine/index.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { startSimulator } from '../../../sandbox/simulator/simulator.js';

describe('PGlite socket server shared by the indexer and a pooled reader', () => {
  let pg: EmbeddedPostgres;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  beforeAll(async () => {
    pg = await startEmbeddedPostgres();
    engine = await startEngine({ port: 0, tickMs: 20, commitMs: 200 });
    indexer = await startIndexer({ databaseUrl: pg.url, engineUrl: engine.url, adminToken: engine.adminToken, batchWindowMs: 2 });
  });
  afterAll(async () => {
    await indexer?.close();
    await engine?.close();
    await pg?.stop();
  });

  it('keeps reads separate and batches atomic', async () => {
    const reader = postgres(pg.url, { max: 4, prepare: true, onnotice: () => {} });
    const sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 300, bots: 6, seed: 5 });
    let reads = 0;
    const wrong: string[] = [];
    const end = Date.now() + 3000;
    const loop = async (id: number): Promise<void> => {
      for (let i = 0; Date.now() < end; i++) {
        const tag = id * 1_000_000 + i;
        const [r] = await reader<Array<{ tag: number; filled: string; fillSeqs: string }>>`
          SELECT ${tag}::int AS tag,
                 (SELECT count(*) FROM events WHERE kind = 'engine.order_filled') AS filled,
                 (SELECT count(DISTINCT seq) FROM fills) AS "fillSeqs"`;
        reads++;
        if (r!.tag !== tag) wrong.push(`asked ${tag}, got ${r!.tag}`);
        if (r!.filled !== r!.fillSeqs) wrong.push(`half a batch: ${r!.filled} fill events, ${r!.fillSeqs} fill seqs`);
      }
    };
    try {
      await Promise.all([1, 2, 3, 4, 5, 6].map(loop));
    } finally {
      await sim.stop();
      await reader.end();
    }
    const maxSeq = engine.engine.log.maxSeq;
    await indexer.waitFor(maxSeq, 20_000);
    expect(wrong).toEqual([]);
    expect(reads).toBeGreaterThan(100);
    expect(indexer.stats().batches).toBeGreaterThan(20); // the writes really interleaved with the reads
  }, 40_000);
});
