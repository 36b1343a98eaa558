// DependencyState (src/dependency-state.ts): one log line when a dependency goes, one when it comes
// back. An answer to a request sent before the outage began does not end it: a query running when
// PostgreSQL began to shut down may still complete, and it logged a false "reachable again"
// followed by a second "unreachable" (seen in a CI run of test/e2e/fleet/postgres-stopped.test.ts).
import { describe, expect, it } from 'vitest';
import { DependencyState } from '../../src/dependency-state.js';
import { VirtualClock } from '../support/virtual-clock.js';

function state() {
  const lines: string[] = [];
  const clock = new VirtualClock();
  return { s: new DependencyState('database', { warn: (_o, msg) => lines.push(msg) }, clock), lines, clock };
}

describe('DependencyState', () => {
  it('logs the first failure of an outage and its end, once each', () => {
    const { s, lines } = state();
    s.answered();
    s.failed('ECONNREFUSED');
    s.failed('ECONNREFUSED');
    expect(s.down).toBe(true);
    s.answered();
    s.answered();
    expect(lines).toEqual(['database: unreachable', 'database: reachable again']);
  });

  it('an answer to a request sent before the outage began does not end it; one sent after does', async () => {
    const { s, lines, clock } = state();
    const before = clock.now();
    await clock.advance(5);
    s.failed('57P01 admin_shutdown');
    s.answered(before); // a query in flight when the server began to stop, completed anyway
    expect(s.down).toBe(true);
    await clock.advance(5);
    s.answered(clock.now());
    expect(s.down).toBe(false);
    expect(lines).toEqual(['database: unreachable', 'database: reachable again']);
  });
});
