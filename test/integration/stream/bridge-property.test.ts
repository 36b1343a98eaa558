// Property: whatever the engine writes on the wire (repeats, stale seqs, skipped seqs, drops),
// clients see every logged seq exactly once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { waitFor } from '../../support/scripted-sse.js';
import { tick } from '../../unit/projections/fixtures.js';
import { connect, startStack, type Stack, type TestClient } from './helpers.js';

type Op = { op: 'push'; n: number } | { op: 'repeat'; back: number } | { op: 'skipAhead'; by: number } | { op: 'drop' };

describe('SSE bridge ordering property', () => {
  let s: Stack;
  let c: TestClient;
  let seq = 0;
  beforeAll(async () => {
    s = await startStack();
    await s.engine.waitFor(() => s.engine.open === 1);
    c = await connect(s.gw.url, 'kinds=engine.tick_start');
    // The bridge starts live (no Last-Event-ID): the first event it sees fixes where it starts.
    s.engine.push(tick(++seq, new Date(1_700_000_000_000).toISOString()));
    await waitFor(() => c.frames().length === 1, 5_000, 'first event');
  });
  afterAll(async () => s.close());

  it('never forwards a seq twice or out of order, and loses none', async () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('push' as const), n: fc.integer({ min: 1, max: 5 }) }),
      fc.record({ op: fc.constant('repeat' as const), back: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ op: fc.constant('skipAhead' as const), by: fc.integer({ min: 2, max: 4 }) }),
      fc.record({ op: fc.constant('drop' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), async (ops) => {
        const fromSeq = seq;
        const fromIndex = c.frames().length;
        for (const o of ops) {
          if (o.op === 'push') for (let i = 0; i < o.n; i++) s.engine.push(tick(++seq, new Date(1_700_000_000_000 + seq * 1000).toISOString()));
          else if (o.op === 'repeat' && seq - o.back >= 1) s.engine.writeRaw(tick(seq - o.back, new Date(1_700_000_000_000 + (seq - o.back) * 1000).toISOString()));
          else if (o.op === 'skipAhead') s.engine.writeRaw(tick(seq + o.by, new Date(1_700_000_000_000 + (seq + o.by) * 1000).toISOString()));
          else if (o.op === 'drop') s.engine.dropAll();
        }
        // The engine's log is the truth: a skipped-ahead seq written raw is pushed for real later.
        s.engine.push(tick(++seq, new Date(1_700_000_000_000 + seq * 1000).toISOString()));
        await waitFor(() => (c.frames().at(-1)?.seq ?? 0) >= seq, 10_000, `seq ${seq}`);
        const got = c.frames().slice(fromIndex).map((f) => f.seq);
        expect(got).toEqual(Array.from({ length: seq - fromSeq }, (_, i) => fromSeq + i + 1));
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});
