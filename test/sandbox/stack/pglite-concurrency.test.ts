// The local stack's embedded database under the stack's real load: the indexer writing batches
// (one simple-protocol message each) while a pooled, prepared-statement client (the gateway's
// driver settings) reads concurrently over the PGlite socket server. Every read must get its own
// answer (no crossed portals) and never see half a batch (events without their fills).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../sandbox/pglite-server.js';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { startSimulator } from '../../../sandbox/simulator/simulator.js';

describe('PGlite socket server shared by the indexer and a pooled reader', () => {
  let pg: EmbeddedPostgres;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  // Closed last started first: the indexer, the engine, the database.
  const file = fileScope();
  beforeAll(async () => {
    pg = await startEmbeddedPostgres();
    file.onTestFinished(() => pg.stop());
    engine = await testEngine(file, { tickMs: 20, commitMs: 200 });
    indexer = await startIndexer({ databaseUrl: pg.url, engineUrl: engine.url, adminToken: engine.adminToken, batchWindowMs: 2 });
    file.onTestFinished(() => indexer.close());
  });

  it('keeps reads separate and batches atomic', async () => {
    const reader = postgres(pg.url, { max: 4, prepare: true, onnotice: () => {} });
    const sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 300, bots: 6, seed: 5 });
    let reads = 0;
    const wrong: string[] = [];
    // At least 3 s, and on until the reads and the indexer's batches really interleaved (a loaded
    // machine gets fewer of either in 3 s); 25 s at most, then the counts below say what was short.
    const started = Date.now();
    const going = (): boolean => Date.now() < started + 3000 || ((reads <= 100 || indexer.stats().batches <= 20) && Date.now() < started + 25_000);
    const loop = async (id: number): Promise<void> => {
      for (let i = 0; going(); i++) {
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
  }, 60_000);
});

describe('PGlite socket server: one connection\'s extended-protocol exchange is never split', () => {
  it('runs unnamed (prepare: false), named and simple-protocol queries side by side without a failure or a crossed answer', async () => {
    // On disk, as in the local stack: the indexer's unnamed statements, the gateway's pool of named
    // ones, and the stack's simple-protocol probes and writes, all at once.
    const dataDir = mkdtempSync(join(tmpdir(), 'pglite-exchange-'));
    const pg = await startEmbeddedPostgres({ dataDir });
    const setup = postgres(pg.url, { max: 1, onnotice: () => {} });
    const unnamed = postgres(pg.url, { max: 1, prepare: false, onnotice: () => {} });
    const named = postgres(pg.url, { max: 4, prepare: true, onnotice: () => {} });
    const simple = postgres(pg.url, { max: 2, onnotice: () => {} });
    const failures: string[] = [];
    const counts = { unnamed: 0, named: 0, simple: 0 };
    try {
      await setup.unsafe("CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 100) g").simple();
      // At least 2 s, and on until each kind really ran alongside the others (a loaded machine gets
      // fewer of each in 2 s); 25 s at most, then the counts below say what was short.
      const started = Date.now();
      const going = (): boolean =>
        Date.now() < started + 2000 || (Math.min(counts.unnamed, counts.named, counts.simple) <= 100 && Date.now() < started + 25_000);
      const guard = async (what: string, fn: () => Promise<void>): Promise<void> => {
        try {
          await fn();
        } catch (e) {
          failures.push(`${what}: ${(e as Error).message}`);
        }
      };
      const unnamedLoop = async (): Promise<void> => {
        for (let i = 0; going(); i++) {
          await guard('unnamed', async () => {
            const [r] = await unnamed<Array<{ tag: number; v: string }>>`SELECT ${i}::int AS tag, v FROM t WHERE id = ${(i % 100) + 1}`;
            if (r?.tag !== i || r.v === undefined) failures.push(`unnamed: asked ${i}, got ${JSON.stringify(r)}`);
            counts.unnamed++;
          });
        }
      };
      const namedLoop = async (id: number): Promise<void> => {
        for (let i = 0; going(); i++) {
          const tag = id * 1_000_000 + i;
          await guard('named', async () => {
            const [r] = await named<Array<{ tag: number }>>`SELECT ${tag}::int AS tag`;
            if (r?.tag !== tag) failures.push(`named: asked ${tag}, got ${JSON.stringify(r)}`);
            counts.named++;
          });
        }
      };
      const simpleLoop = async (write: boolean): Promise<void> => {
        for (let i = 0; going(); i++) {
          await guard('simple', async () => {
            await simple.unsafe(write ? `UPDATE t SET v = 'w${i}' WHERE id = ${(i % 100) + 1}` : 'SELECT count(*) FROM t').simple();
            counts.simple++;
          });
        }
      };
      await Promise.all([unnamedLoop(), namedLoop(1), namedLoop(2), namedLoop(3), simpleLoop(false), simpleLoop(true)]);
    } finally {
      await Promise.all([setup.end(), unnamed.end(), named.end(), simple.end()]);
      await pg.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(failures.slice(0, 5)).toEqual([]);
    // Each kind really ran alongside the others.
    expect(counts.unnamed).toBeGreaterThan(100);
    expect(counts.named).toBeGreaterThan(100);
    expect(counts.simple).toBeGreaterThan(100);
  }, 60_000);
});
