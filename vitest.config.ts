import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One configuration for every suite. Integration and e2e tests start real servers
// (PostgreSQL databases, the reference engine, the gateway) on loopback, so they get
// generous timeouts; files run in parallel in forked workers, bounded to the two cores CI has.
export default defineConfig({
  // The console's modules import the published client by its name, as the console's bundle resolves it.
  resolve: { alias: { '@gateway/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
