// SharedRead: identical concurrent reads share one call, never one that started before they arrived.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SharedRead } from '../../../src/engine/shared-read.js';

interface Call {
  id: number;
  path: string;
  startedAt: number;
  settle: (ok: boolean) => void;
}

/** A fetch the test settles by hand, with a logical clock to order arrivals and call starts. */
function harness() {
  let clock = 0;
  let ids = 0;
  const calls: Call[] = [];
  const open = new Map<string, Call[]>();
  let saved = 0;
  const shared = new SharedRead<{ id: number; startedAt: number }>(
    (path) =>
      new Promise((resolve, reject) => {
        const call: Call = {
          id: ++ids,
          path,
          startedAt: ++clock,
          settle: (ok) => (ok ? resolve({ id: call.id, startedAt: call.startedAt }) : reject(new Error(`call ${call.id} failed`))),
        };
        calls.push(call);
        (open.get(path) ?? open.set(path, []).get(path)!).push(call);
      }),
    (n) => (saved += n),
  );
  return {
    shared,
    calls,
    open,
    tick: () => ++clock,
    saved: () => saved,
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('SharedRead', () => {
  it('starts the first read at once and gathers reads made meanwhile into the next call', async () => {
    const h = harness();
    const first = h.shared.read('/a');
    expect(h.calls).toHaveLength(1);
    const later = [h.shared.read('/a'), h.shared.read('/a'), h.shared.read('/a')];
    expect(h.calls).toHaveLength(1); // nothing new while call 1 is in flight
    h.calls[0]!.settle(true);
    expect((await first).id).toBe(1);
    await flush();
    expect(h.calls).toHaveLength(2);
    h.calls[1]!.settle(true);
    expect((await Promise.all(later)).map((r) => r.id)).toEqual([2, 2, 2]);
    expect(h.saved()).toBe(2);
    await flush();
    expect(h.shared.activePaths).toBe(0);
  });

  it('keeps paths apart', () => {
    const h = harness();
    void h.shared.read('/a');
    void h.shared.read('/b');
    expect(h.calls.map((c) => c.path)).toEqual(['/a', '/b']);
  });

  it('rejects every request of a failed call, then calls again for the next read', async () => {
    const h = harness();
    void h.shared.read('/a').catch(() => {});
    const waiting = [h.shared.read('/a'), h.shared.read('/a')];
    h.calls[0]!.settle(true);
    await flush();
    h.calls[1]!.settle(false);
    for (const w of waiting) await expect(w).rejects.toThrow('call 2 failed');
    await flush();
    const again = h.shared.read('/a');
    expect(h.calls).toHaveLength(3);
    h.calls[2]!.settle(true);
    expect((await again).id).toBe(3);
  });

  it('property: every read is answered by a call that started after it arrived, one call in flight per path', async () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('read' as const), path: fc.constantFrom('/a', '/b', '/c') }),
      fc.record({ op: fc.constant('settle' as const), path: fc.constantFrom('/a', '/b', '/c'), ok: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const h = harness();
        const reads: Array<{ arrivedAt: number; result: Promise<{ id: number; startedAt: number } | Error> }> = [];
        const settleOldest = async (path: string, ok: boolean) => {
          const list = h.open.get(path);
          const call = list?.shift();
          if (!call) return;
          call.settle(ok);
          await flush();
        };
        for (const s of steps) {
          if (s.op === 'read') {
            const arrivedAt = h.tick();
            reads.push({ arrivedAt, result: h.shared.read(s.path).catch((e: Error) => e) });
          } else {
            await settleOldest(s.path, s.ok);
          }
          for (const list of h.open.values()) expect(list.length).toBeLessThanOrEqual(1);
        }
        // Drain: settle whatever is still in flight until nothing is left.
        for (let guard = 0; guard < 200 && [...h.open.values()].some((l) => l.length > 0); guard++) {
          for (const path of h.open.keys()) await settleOldest(path, true);
        }
        const results = await Promise.all(reads.map((r) => r.result));
        const byId = new Map(h.calls.map((c) => [c.id, c]));
        results.forEach((res, i) => {
          const id = res instanceof Error ? Number(/call (\d+)/.exec(res.message)![1]) : res.id;
          expect(byId.get(id)!.startedAt).toBeGreaterThan(reads[i]!.arrivedAt);
        });
        expect(h.calls.length).toBeLessThanOrEqual(reads.length);
        expect(h.calls.length + h.saved()).toBe(reads.length);
        expect(h.shared.activePaths).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps serving a path when the saved-calls counter throws', async () => {
    const settles: Array<() => void> = [];
    let n = 0;
    const shared = new SharedRead<number>(
      () => new Promise<number>((resolve) => settles.push(() => resolve(++n))),
      () => {
        throw new Error('metrics broke');
      },
    );
    const first = shared.read('/book');
    const waiting = [shared.read('/book'), shared.read('/book')]; // two share the next call
    settles.shift()!();
    expect(await first).toBe(1);
    await new Promise((r) => setImmediate(r));
    settles.shift()!();
    expect(await Promise.all(waiting)).toEqual([2, 2]);
    expect(shared.activePaths).toBe(0);
    const later = shared.read('/book');
    settles.shift()!();
    expect(await later).toBe(3);
  });
});
