// The commitment watcher over a real history of the reference engine: every claim matches when it
// has seen the history from seq 1; a changed claim is a mismatch naming what differs; a watcher
// started mid-batch skips (never flags) what it cannot recompute, and checks everything after the
// first manifest.
import { beforeAll, describe, expect, it } from 'vitest';
import { CommitmentWatcher, type CommitmentCheck } from '../../../src/commitments/watcher.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import { engineHistory } from '../../support/engine-history.js';

let history: EngineEvent[];
beforeAll(async () => {
  history = await engineHistory();
}, 30_000);

function run(events: EngineEvent[], setup?: (w: CommitmentWatcher) => void): CommitmentCheck[] {
  const checks: CommitmentCheck[] = [];
  const w = new CommitmentWatcher((c) => checks.push(c));
  setup?.(w);
  for (const e of events) w.observe(structuredClone(e));
  return checks;
}

const claims = (events: EngineEvent[]) => events.filter((e) => e.kind === 'engine.user_batch_committed').length;
const manifests = (events: EngineEvent[]) => events.filter((e) => e.kind === 'outbound.batch_committed').length;

describe('CommitmentWatcher', () => {
  it('matches every claim of a history seen from seq 1', () => {
    const checks = run(history);
    expect(checks.filter((c) => c.kind === 'user_batch')).toHaveLength(claims(history));
    expect(checks.filter((c) => c.kind === 'manifest')).toHaveLength(manifests(history));
    expect(manifests(history)).toBeGreaterThanOrEqual(5);
    expect(checks.filter((c) => c.result !== 'match')).toEqual([]);
  });

  it('flags a changed user root, event count or chain link, and the manifest over it', () => {
    const events = structuredClone(history);
    const target = events.filter((e) => e.kind === 'engine.user_batch_committed')[4]!;
    target.payload.root = `${(target.payload.root as string).slice(0, -1)}${(target.payload.root as string).endsWith('0') ? '1' : '0'}`;
    const checks = run(events);
    const bad = checks.filter((c) => c.result === 'mismatch');
    expect(bad.map((c) => [c.kind, c.seq, c.reasons])).toEqual([
      ['user_batch', target.seq, ['root']],
      // The party's next claim chains on the root of the events (the gateway's own), and the manifest
      // over the true roots matches: one wrong claim, one incident.
    ]);
    const uc = bad[0] as Extract<CommitmentCheck, { kind: 'user_batch' }>;
    expect(uc.party).toBe(target.party);
    expect(uc.firstSeq).toBeLessThanOrEqual(uc.lastSeq!);
    expect(uc.lastSeq).toBeLessThan(target.seq);
  });

  it('flags a manifest whose root differs from the user roots streamed', () => {
    const events = structuredClone(history);
    const m = events.filter((e) => e.kind === 'outbound.batch_committed')[2]!;
    m.payload.root = '0'.repeat(63) + '1';
    const bad = run(events).filter((c) => c.result === 'mismatch');
    expect(bad.map((c) => [c.kind, c.seq, c.reasons])).toEqual([
      ['manifest', m.seq, ['root']],
      // The next manifest chains on the recomputed root: only this one is flagged.
    ]);
  });

  it('flags an event the engine left out of a batch, and one it added', () => {
    const missing = structuredClone(history);
    const fillIdx = missing.findIndex((e) => e.kind === 'engine.order_filled');
    missing.splice(fillIdx, 1); // the gateway never sees it, the engine hashed it
    const bad = run(missing).filter((c) => c.result === 'mismatch');
    expect(bad.length).toBeGreaterThanOrEqual(2); // both parties of the fill
    expect(bad.every((c) => c.kind === 'manifest' || c.reasons.includes('eventCount'))).toBe(true);

    const extra = structuredClone(history);
    const deposit = extra.find((e) => e.kind === 'inbound.deposit')!;
    const claim = extra.find((e) => e.kind === 'engine.user_batch_committed' && e.party === deposit.party)!;
    // A mirror that shows one more event than the engine committed (same party, before its claim).
    extra.splice(extra.indexOf(claim), 0, { ...structuredClone(deposit), seq: claim.seq - 0.5 });
    const flagged = run(extra).filter((c) => c.result === 'mismatch');
    expect(flagged.map((c) => [c.kind, c.seq, c.reasons])).toEqual([
      ['user_batch', claim.seq, ['root', 'eventCount']],
      ['manifest', extra.find((e) => e.kind === 'outbound.batch_committed' && e.seq > claim.seq)!.seq, ['root', 'seqRange']],
    ]);
  });

  it('started mid-batch: skips what began before it, checks everything after the first manifest', () => {
    const firstManifest = history.findIndex((e) => e.kind === 'outbound.batch_committed');
    const secondManifest = history.findIndex((e, i) => i > firstManifest && e.kind === 'outbound.batch_committed');
    // Start a few events into the second commit period.
    const start = firstManifest + 3;
    const checks = run(history.slice(start));
    const beforeAlign = checks.filter((c) => c.seq <= history[secondManifest]!.seq);
    const afterAlign = checks.filter((c) => c.seq > history[secondManifest]!.seq);
    expect(beforeAlign.length).toBeGreaterThan(0);
    expect(beforeAlign.every((c) => c.result === 'skipped')).toBe(true);
    expect(afterAlign.length).toBeGreaterThan(0);
    expect(afterAlign.every((c) => c.result === 'match')).toBe(true);
    expect(checks.some((c) => c.result === 'mismatch')).toBe(false);
  });

  it('aligned on a manifest (the database seed) checks the very next commit', () => {
    const firstManifest = history.findIndex((e) => e.kind === 'outbound.batch_committed');
    const checks = run(history.slice(firstManifest + 1), (w) => w.alignAfter(history[firstManifest]!.seq));
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.every((c) => c.result === 'match')).toBe(true);
  });

  it('after reset (a replaced history) knows nothing until aligned again', () => {
    const checks: CommitmentCheck[] = [];
    const w = new CommitmentWatcher((c) => checks.push(c));
    for (const e of history) w.observe(e);
    w.reset();
    const firstManifest = history.findIndex((e) => e.kind === 'outbound.batch_committed');
    checks.length = 0;
    for (const e of history.slice(firstManifest - 2)) w.observe(e);
    expect(checks[0]!.result).toBe('skipped');
    expect(checks.filter((c) => c.result === 'mismatch')).toEqual([]);
  });
});
