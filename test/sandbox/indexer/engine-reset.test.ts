// An engine that restarted with empty memory has a different history under the same seqs. The
// indexer notices (engine maxSeq below its mirror, or event <seq> differing) and, with
// onEngineReset 'wipe', clears the mirror and indexes the new history; with 'wait' it leaves the
// mirror untouched.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { startIndexer } from '../../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

const party = `r1::${'1'.repeat(64)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('indexer after an engine reset', () => {
  let db: TestDatabase;
  // Closed last started first: the engines (a close is idempotent: the test closes the first one
  // itself, to start another on its port), then the database.
  const file = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
  });

  async function engineWith(ticks: number, port = 0): Promise<RunningEngine> {
    const e = await testEngine(file, { port });
    for (let i = 0; i < ticks; i++) e.engine.tick();
    return e;
  }

  it('wipes and re-indexes when the new history is shorter or different; waits otherwise', async () => {
    const first = await engineWith(5);
    first.engine.deposit({ party, amount: '10', txId: '0x10' }, 'chain');
    let ix = await startIndexer({ databaseUrl: db.url, engineUrl: first.url, adminToken: first.adminToken, onEngineReset: 'wipe' });
    await ix.waitFor(6);
    await ix.close();
    await first.close();

    // Same port, new memory, longer history: only the event comparison can tell it apart.
    await sleep(5); // deliberate: distinct timestamps
    const second = await engineWith(9, first.port);
    const waiting = await startIndexer({ databaseUrl: db.url, engineUrl: second.url, adminToken: second.adminToken, onEngineReset: 'wait' });
    // Deliberate: within 400 ms the waiting indexer writes nothing (its refusal to go on is not counted anywhere to wait for).
    await sleep(400);
    expect(waiting.lastSeq()).toBe(6);
    expect((await db.sql`SELECT kind FROM events WHERE seq = 6`)[0]).toEqual({ kind: 'inbound.deposit' });
    await waiting.close();

    ix = await startIndexer({ databaseUrl: db.url, engineUrl: second.url, adminToken: second.adminToken, onEngineReset: 'wipe' });
    await ix.waitFor(9);
    expect(ix.stats().wipes).toBe(1);
    const kinds = await db.sql<{ kind: string }[]>`SELECT kind FROM events ORDER BY seq`;
    expect(kinds.map((k) => k.kind)).toEqual(Array(9).fill('engine.tick_start'));
    expect(await db.sql`SELECT * FROM deposits`).toHaveLength(0);
    expect(await db.sql`SELECT * FROM vaults`).toHaveLength(0);
    expect((await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM markets`)[0]!.n).toBe(3);
    await ix.close();
  }, 30_000);
});
