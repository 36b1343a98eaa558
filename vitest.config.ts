import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.js';

// One configuration, one project per lane (test/README.md):
// - unit: no process, no server, no database; pure code and code on a VirtualClock. One worker
//   runs many files (isolate: false): starting a fresh worker per file cost more than the tests.
// - integration: a gateway or a scripted engine in process, PostgreSQL, Redis, NATS, tsc, tools.
// - e2e: the reference engine, the gateway, clients, browsers, fleets, processes.
// - sandbox: the sandbox's engine, indexer, simulator and stack.
// Integration and later lanes start real servers on loopback, so they get generous timeouts and a
// fresh forked worker per file. Three files run at once on CI's two cores: most of them wait on
// servers, processes and fixed windows (two workers kept the cores 46% busy; three, 66%, and the
// run took 511 s instead of 674 s: ADR 0375). The known-long files start first (the sequencer).
export default defineConfig({
  // The console's modules import the published client by its name, as the console's bundle resolves it.
  resolve: { alias: { '@gateway/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) } },
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Known-long files first, across the lanes; the unit lane last (test/support/sequencer.ts, ADR 0375).
    sequence: { sequencer: LongestFirstSequencer },
    maxWorkers: 3,
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
