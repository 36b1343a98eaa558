// An honest history always verifies (issue 39): the stack as `npm start` runs it (the reference
// engine on its own timers, the reference indexer playing the chain, the market simulator's bots
// trading, depositing from the chain, withdrawing; a live gateway) on free ports, for a minute
// (VERIFY_STACK_SECONDS), and every simulated party verified with the published client's
// verifyAccount: none `failed` while they trade, and every one `verified` once they stop. Chain
// deposits are among what is checked: each receipt of the chain matched to its committed credit,
// transaction id included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, type AccountVerdict } from '../../../packages/client/src/index.js';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { startSimulator, type RunningSimulator } from '../../../sandbox/simulator/simulator.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';

const SECONDS = Number(process.env.VERIFY_STACK_SECONDS ?? 60);

const summary = (v: AccountVerdict) => ({ party: v.party, status: v.status, first: v.first?.message ?? null, deposits: v.deposits });

describe('every simulated party verifies', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  let gateway: TestGateway;
  let sim: RunningSimulator;
  let client: GatewayClient;

  // Closed after the afterAll below (registered later, run first: the bots stopped), last started
  // first: the gateway, the indexer, the engine, the database.
  const file = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
    engine = await testEngine(file, { tickMs: 500, commitMs: 2_000 });
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
    file.onTestFinished(() => indexer.close());
    gateway = await testLiveGateway(file, engine, { DATABASE_URL: db.url, AUTH_DISABLED: 'true', RATE_LIMIT_MAX: '1000000' });
    client = new GatewayClient({ baseUrl: gateway.url, retry: { retries: 0 } });
    sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 20, bots: 6, seed: 39 });
  }, 60_000);
  let stopped = false;
  const stopBots = async () => {
    if (!stopped && sim) await sim.stop();
    stopped = true;
  };
  afterAll(async () => {
    await stopBots();
  });

  it(`while the bots trade (${SECONDS} s) none fails; once they stop every one is verified, chain deposits included`, async () => {
    const started = Date.now();
    const during: AccountVerdict[] = [];
    // Halfway and at the end of the run, while trading: verified up to each party's last commitment.
    for (const at of [0.5, 1]) {
      // Deliberate: the bots trade for a set time (a point of the run, not an event).
      while (Date.now() - started < at * SECONDS * 1000) await new Promise((r) => setTimeout(r, 250));
      for (const party of sim.parties) during.push(await client.verifyAccount(party));
    }
    await stopBots();
    expect(sim.stats().errors).toBe(0);
    expect(sim.stats().rejected.http_400).toBeUndefined(); // every chain deposit named its transaction
    expect(during.filter((v) => v.status === 'failed').map(summary)).toEqual([]);

    // Everything committed and indexed, and the live account view caught up: all verified.
    engine.engine.tick();
    engine.engine.commit();
    const head = engine.engine.log.maxSeq;
    await indexer.waitFor(head, 60_000);
    const after: AccountVerdict[] = [];
    for (const party of sim.parties) {
      await eventually(async () => (await client.getAccount(party)).asOfSeq >= head, { timeoutMs: 20_000, everyMs: 50, what: `the account view of ${party} at the head (stuck?)` });
      after.push(await client.verifyAccount(party));
    }
    expect(after.filter((v) => v.status !== 'verified').map(summary)).toEqual([]);
    expect(after.every((v) => v.pendingCount === 0 && v.problems.length === 0)).toBe(true);
    // The run exercised what issue 39 was about: chain deposits, each receipt matched to its credit.
    const chain = await db.sql<Array<{ n: number; withId: number }>>`
      SELECT count(*)::int AS n, count(tx_id)::int AS "withId" FROM deposits WHERE source = 'chain'`;
    expect(chain[0]!.n).toBeGreaterThan(0);
    expect(chain[0]!.withId).toBe(chain[0]!.n);
    expect(after.reduce((n, v) => n + v.deposits.credited, 0)).toBe(after.reduce((n, v) => n + v.deposits.receipts, 0));
    expect(after.reduce((n, v) => n + v.events, 0)).toBeGreaterThan(500);
  }, (SECONDS + 150) * 1000);
});
