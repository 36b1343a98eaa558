import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { WAITING_FILES, waitingSelection } from './test/support/waiting-files.js';

// One configuration, one project per lane (test/README.md):
// - unit: no process, no server, no database; pure code and code on a VirtualClock. One worker
//   runs many files (isolate: false): starting a fresh worker per file cost more than the tests.
// - integration: a gateway or a scripted engine in process, PostgreSQL, Redis, NATS, tsc, tools.
// - e2e: the reference engine, the gateway, clients, browsers, fleets, processes.
// - sandbox: the sandbox's engine, indexer, simulator and stack.
// Integration and later lanes start real servers on loopback, so they get generous timeouts; files
// run in parallel, bounded to the two cores CI has. Integration and e2e files share their workers
// (isolate: false, ADR 0378): a fresh fork and import per file was a third of those lanes' CPU
// (integration 230 s -> 123 s, e2e 386 s -> 281 s, every file passing); a test there leaves no
// process-wide state behind. TEST_ISOLATE=true gives each file its own worker again (to find a
// test that does). The sandbox lane and the waiting files keep a worker each.
//
// TEST_WAITING (set by `npm test`, scripts/test.ts, ADR 0378): `skip` leaves out the files that
// mostly wait (test/support/waiting-files.ts), `only` runs them alone, two at a time; unset, every
// file runs here (`npx vitest run …`, the lanes' npm scripts).
const waiting = waitingSelection(process.env.TEST_WAITING);
const isolate = waiting === 'only' || process.env.TEST_ISOLATE === 'true';

function lane(name: string, dir: string, extra: { isolate?: boolean } = {}) {
  const include = waiting === 'only' ? WAITING_FILES.filter((f) => f.startsWith(`${dir}/`)) : [`${dir}/**/*.test.ts`];
  const exclude = waiting === 'skip' ? [...configDefaults.exclude, ...WAITING_FILES] : configDefaults.exclude;
  return { extends: true as const, test: { name, include, exclude, ...extra } };
}

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
      lane('unit', 'test/unit', { isolate: false }),
      lane('integration', 'test/integration', { isolate }),
      lane('e2e', 'test/e2e', { isolate }),
      lane('sandbox', 'test/sandbox'),
    ],
  },
});
