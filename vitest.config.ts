import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One configuration, one project per lane (test/README.md):
// - unit: no process, no server, no database; pure code and code on a VirtualClock. One worker
//   runs many files (isolate: false): starting a fresh worker per file cost more than the tests.
// - integration: a gateway or a scripted engine in process, PostgreSQL, Redis, NATS, tsc, tools.
// - e2e: the reference engine, the gateway, clients, browsers, fleets, processes.
// - sandbox: the sandbox's engine, indexer, simulator and stack.
// Integration and later lanes start real servers on loopback, so they get generous timeouts and a
// fresh forked worker per file; files run in parallel, bounded to the two cores CI has.
export default defineConfig({
  // The console's modules import the published client by its name, as the console's bundle resolves it.
  resolve: { alias: { '@gateway/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) } },
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
      { extends: true, test: { name: 'sandbox', include: ['test/sandbox/**/*.test.ts'] } },
    ],
  },
});
