// The stacks tests start (the reference engine, a gateway, a gateway on an engine's live stream),
// each closed for the test by the test framework, as fastify/demo's `build(t)`:
//
//   it('…', async (t) => { const engine = await testEngine(t); … })     closed when the test ends
//   const file = fileScope();                                          in a describe or the file:
//   beforeAll(async () => { engine = await testEngine(file); … });    closed after its last test
//
// Stacks close in the reverse order they were started (a gateway before the engine it reads).
import { afterAll } from 'vitest';
import { startEngine, type RunningEngine, type StartEngineOptions } from '../../sandbox/engine/index.js';
import type { LiveRuntime } from '../../src/live.js';
import { startIndexer, type IndexerOptions, type RunningIndexer } from '../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { startGateway, startLiveGateway, type TestGateway } from './gateway.js';

/** Where a stack's teardown goes: a test's context (vitest's TestContext is one) or a `fileScope()`. */
export interface Scope {
  onTestFinished(fn: () => unknown): void;
}

/**
 * A scope for the tests of the describe (or file) it is called in: what is started in it is closed
 * after their last test, last started first. Call it while the tests are collected, not in a hook.
 */
export function fileScope(): Scope {
  const closers: Array<() => unknown> = [];
  afterAll(async () => {
    const errors: unknown[] = [];
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  });
  return { onTestFinished: (fn) => void closers.push(fn) };
}

/** The reference engine on a free loopback port; quiet (no ticks, no commitments) unless `options` say otherwise. */
export async function testEngine(scope: Scope, options: StartEngineOptions = {}): Promise<RunningEngine> {
  const engine = await startEngine({ port: 0, tickMs: 0, commitMs: 0, ...options });
  scope.onTestFinished(() => engine.close());
  return engine;
}

/** A gateway app (test/support/gateway.ts startGateway). */
export async function testGateway(scope: Scope, ...args: Parameters<typeof startGateway>): Promise<TestGateway> {
  const gateway = await startGateway(...args);
  scope.onTestFinished(() => gateway.close());
  return gateway;
}

/** A listening gateway on an engine's live stream, connected (test/support/gateway.ts startLiveGateway). */
export async function testLiveGateway(scope: Scope, ...args: Parameters<typeof startLiveGateway>): Promise<TestGateway & { live: LiveRuntime }> {
  const gateway = await startLiveGateway(...args);
  scope.onTestFinished(() => gateway.close());
  return gateway;
}

/**
 * The reference engine and the reference indexer recording it (the chain) into a database of its
 * own (migrated): what a gateway's reads and proofs are checked against. `indexer` adds the
 * indexer's options (say, a user batch recorded wrong), `engine` the engine's. Closed the indexer
 * first, then the engine, the database last.
 */
export async function testRecordedChain(
  scope: Scope,
  indexer: Omit<IndexerOptions, 'databaseUrl' | 'engineUrl' | 'adminToken'> = {},
  engineOptions: StartEngineOptions = {},
): Promise<{ engine: RunningEngine; db: TestDatabase; indexer: RunningIndexer }> {
  const db = await createTestDatabase();
  scope.onTestFinished(() => db.drop());
  const engine = await testEngine(scope, engineOptions);
  const running = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, ...indexer });
  scope.onTestFinished(() => running.close());
  return { engine, db, indexer: running };
}
