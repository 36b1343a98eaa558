// The test files that mostly wait: each holds a window of real time an issue set (a NATS seed killed
// for 60 s, a minute of simulated trading sampled once a second, nginx's and Redis's timeouts, a
// stream cut for 20 s) and keeps a core busy a third of it or less. `npm test` (scripts/test.ts,
// ADR 0378) runs them two at a time in a lane of their own beside the other files' two workers, so
// their windows overlap the others' work instead of holding one of those two workers for minutes.
//
// Measured alone on the 2-core machine (2026-12-03, `/usr/bin/time npx vitest run <file>`: wall, and
// the CPU of the test process and the processes it waited for):
//   nats-cluster 125 s wall / 48 s CPU, nginx-rules 62 / 7, simulated-market-verify 63 / 14,
//   market-liquidity 63 / 8, cut-resume 39 / 7, idle-upstream-connections 32 / 5,
//   client-order-claims 30 / 8, redis-sentinel-failover 26 / 8, redis-replay-memory-lost 22 / 5.
// client-order-claims (30 / 8) waits too but runs with the other files: with those sharing their
// workers (ADR 0378) they took 357–383 s to this lane's 454–494 s one at a time, so the lane gives
// them back half a minute and runs two at a time (two waiting files use about half a core).
// Not here: long files that keep a core busy (book-truth 68 / 40, switch-promises 23 / 20, the
// stack 20 / 20, explain 32 / 17): beside two workers they would make three at once, which the
// tests' timings did not bear (ADR 0375).
export const WAITING_FILES: readonly string[] = [
  'test/e2e/fleet/nats-cluster.test.ts',
  'test/e2e/fleet/nginx-rules.test.ts',
  'test/e2e/client/simulated-market-verify.test.ts',
  'test/sandbox/simulator/market-liquidity.test.ts',
  'test/sandbox/soak/cut-resume.test.ts',
  'test/e2e/fleet/idle-upstream-connections.test.ts',
  'test/e2e/fleet/redis-sentinel-failover.test.ts',
  'test/integration/fleet/redis-replay-memory-lost.test.ts',
];

/** Which files a vitest run takes (TEST_WAITING): `only` the waiting ones, `skip` them, or all (unset). */
export type WaitingSelection = 'only' | 'skip' | 'all';

export function waitingSelection(value: string | undefined): WaitingSelection {
  if (value === undefined || value === '') return 'all';
  if (value === 'only' || value === 'skip') return value;
  throw new Error(`TEST_WAITING must be "only" or "skip" (got ${JSON.stringify(value)})`);
}
