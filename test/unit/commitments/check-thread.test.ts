// The commitment check off the live path (ADR 0062): a real worker thread fed the events' texts
// reports what the in-process watcher reports; when it falls behind the stream, the live path drops
// its events (counted), reports the claims among them skipped, and never a false mismatch.
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckThread } from '../../../src/commitments/check-thread.js';
import { CommitmentWatcher, type CommitmentCheck } from '../../../src/commitments/watcher.js';
import { parseEngineEvent, type EngineEvent } from '../../../src/contracts/engine-event.js';
import { engineHistory } from '../../support/engine-history.js';

let history: EngineEvent[];
beforeAll(async () => {
  // More rounds than the other tests: enough manifests to see the check realign after a gap.
  history = (await engineHistory({ rounds: 6 })).map((e) => parseEngineEvent(JSON.stringify(e))!);
}, 60_000);

const isClaim = (e: EngineEvent) => e.kind === 'engine.user_batch_committed' || e.kind === 'outbound.batch_committed';

function thread(maxQueuedChars?: number) {
  const checks: CommitmentCheck[] = [];
  let dropped = 0;
  const t = new CheckThread({ onCheck: (c) => checks.push(c), onDropped: (n) => (dropped += n), logger: pino({ level: 'silent' }), maxQueuedChars });
  return { t, checks, dropped: () => dropped };
}

describe('CheckThread', () => {
  it('reports, from its worker, exactly what the watcher reports in process', async () => {
    const inProcess: CommitmentCheck[] = [];
    const w = new CommitmentWatcher((c) => inProcess.push(c));
    for (const e of history) w.observe(e);
    const { t, checks } = thread();
    try {
      for (const e of history) t.event(e);
      await t.drained();
      expect(checks).toEqual(inProcess);
      expect(checks.filter((c) => c.result === 'match')).toHaveLength(history.filter(isClaim).length);
    } finally {
      await t.close();
    }
  });

  it('behind the stream: drops and counts events, skips the claims it cannot check, never flags one, and realigns on a manifest', async () => {
    const { t, checks, dropped } = thread(4_000); // a backlog of a handful of events
    try {
      const burst = Math.floor(history.length / 2);
      expect(history.slice(0, burst).filter((e) => e.kind === 'outbound.batch_committed').length).toBeGreaterThan(1);
      // A burst faster than the worker: the live path goes on without waiting for it.
      for (const e of history.slice(0, burst)) t.event(e);
      expect(dropped()).toBeGreaterThan(0);
      await t.drained();
      // Then at the stream's pace.
      for (const e of history.slice(burst)) {
        t.event(e);
        await t.drained();
      }
      expect(checks.filter((c) => c.result === 'mismatch')).toEqual([]);
      expect(checks).toHaveLength(history.filter(isClaim).length); // every claim reported once
      const skipped = checks.filter((c) => c.result === 'skipped');
      expect(skipped.length).toBeGreaterThan(0);
      // After the gap, the first manifest realigns it: everything after that is checked.
      const lastSkipped = Math.max(...skipped.map((c) => c.seq));
      const after = checks.filter((c) => c.seq > lastSkipped);
      expect(after.length).toBeGreaterThan(0);
      expect(after.every((c) => c.result === 'match')).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('the history replaced: the worker forgets the old one', async () => {
    const { t, checks } = thread();
    try {
      const half = history.findIndex((e, i) => i > 10 && e.kind === 'engine.user_batch_committed');
      for (const e of history.slice(0, half)) t.event(e); // a batch half seen, then a new history
      t.reset();
      for (const e of history) t.event(e);
      await t.drained();
      expect(checks.slice(-history.filter(isClaim).length).every((c) => c.result === 'match')).toBe(true);
      expect(checks.filter((c) => c.result === 'mismatch')).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
