// PartyRetention: which complete accounts the book keeps (held by connections, or read lately),
// against a model: a party is kept iff a connection holds it, or it is among the `maxRead` most
// recently read (or released) parties and that read is younger than `idleMs`.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PartyRetention } from '../../../src/stream/account-retention.js';

function book(idleMs: number, maxRead: number) {
  const complete = new Set<string>();
  const evicted: string[] = [];
  const retention = new PartyRetention({
    idleMs,
    maxRead,
    evict: (p) => {
      complete.delete(p);
      evicted.push(p);
    },
    isComplete: (p) => complete.has(p),
  });
  /** A read: the party is completed (seeded) if needed, then touched. */
  const read = (p: string, now: number) => {
    complete.add(p);
    retention.touch(p, now);
  };
  return { complete, evicted, retention, read };
}

describe('PartyRetention', () => {
  it('keeps a held party whatever the reads, and lets it go idleMs after its last connection closed', () => {
    const { complete, retention, read } = book(1_000, 1);
    retention.hold(['a'], 1, 0);
    read('a', 0);
    for (let i = 0; i < 5; i++) read(`r${i}`, 10 + i); // over the cap, all of them reads
    retention.trim(100_000);
    expect([...complete]).toEqual(['a']);
    retention.hold(['a'], 1, 100_000); // a second connection
    retention.hold(['a'], -1, 100_001);
    retention.trim(200_000);
    expect(complete.has('a')).toBe(true);
    retention.hold(['a'], -1, 200_000); // the last one closes: kept as if just read
    retention.trim(200_999);
    expect(complete.has('a')).toBe(true);
    retention.trim(201_000);
    expect(complete.has('a')).toBe(false);
  });

  it('an incomplete party (its seed failed) is not kept for reads', () => {
    const { retention, complete } = book(1_000, 10);
    retention.touch('x', 0);
    complete.add('y');
    retention.hold(['y'], 1, 0);
    complete.delete('y');
    retention.hold(['y'], -1, 1);
    retention.trim(10_000); // nothing to evict, nothing thrown
    expect(retention.held).toBe(0);
  });

  it('agrees with the model for random reads, holds, releases and sweeps', () => {
    const Op = fc.oneof(
      fc.record({ op: fc.constant('read' as const), p: fc.nat(7), dt: fc.nat(300) }),
      fc.record({ op: fc.constant('hold' as const), p: fc.nat(7), dt: fc.nat(300) }),
      fc.record({ op: fc.constant('release' as const), p: fc.nat(7), dt: fc.nat(300) }),
      fc.record({ op: fc.constant('trim' as const), p: fc.nat(7), dt: fc.nat(300) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 100, max: 1_000 }), fc.array(Op, { maxLength: 80 }), (maxRead, idleMs, ops) => {
        const { complete, retention, read } = book(idleMs, maxRead);
        const holds = new Map<string, number>();
        const lastRead = new Map<string, number>(); // parties kept for reads: their last read or release
        let now = 0;
        for (const { op, p: i, dt } of ops) {
          now += dt;
          const p = `p${i}`;
          if (op === 'read') {
            read(p, now);
            if (!holds.has(p)) {
              lastRead.delete(p);
              lastRead.set(p, now);
            }
          } else if (op === 'hold') {
            retention.hold([p], 1, now);
            holds.set(p, (holds.get(p) ?? 0) + 1);
            lastRead.delete(p);
          } else if (op === 'release') {
            if (!holds.has(p)) continue;
            retention.hold([p], -1, now);
            const n = holds.get(p)! - 1;
            if (n > 0) holds.set(p, n);
            else {
              holds.delete(p);
              if (complete.has(p)) lastRead.set(p, now);
            }
          } else retention.trim(now);
          // The model: over the cap the oldest reads go at once; idle ones at the next touch or sweep.
          const order = [...lastRead].sort((a, b) => a[1] - b[1]);
          while (order.length > maxRead) lastRead.delete(order.shift()![0]);
          for (const [q, at] of [...lastRead]) if (now - at >= idleMs) lastRead.delete(q);
          // A held party that was never read is not complete; every other kept party is.
          const expected = new Set([...lastRead.keys(), ...[...holds.keys()].filter((q) => complete.has(q))]);
          for (const q of expected) expect(complete.has(q), `${q} kept`).toBe(true);
          // Never more read-only parties than the cap; after a sweep, exactly the model's.
          expect([...complete].filter((q) => !holds.has(q)).length).toBeLessThanOrEqual(maxRead);
          if (op === 'trim') expect([...complete].sort()).toEqual([...expected].sort());
          expect(retention.held).toBe(holds.size);
        }
      }),
      { numRuns: 300 },
    );
  });
});
