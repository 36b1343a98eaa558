// The fair share of the engine pool (src/fair-share.ts): its guarantees, as properties over
// random sequences of submits, completions and cancels, and the fairness between addresses and
// parties as exact orders of starts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FairShare, type FairShareOptions, type FairTicket } from '../../src/fair-share.js';

interface Call {
  id: number;
  address: string;
  party: string;
  ticket: FairTicket | null;
  started: boolean;
  over: boolean;
}

/** A share with a record of what started, in order. */
function harness(options: FairShareOptions) {
  const share = new FairShare(options);
  const started: Call[] = [];
  const calls: Call[] = [];
  let next = 0;
  const submit = (address: string, party = 'p', onStart?: (c: Call) => void): Call => {
    const call: Call = { id: next++, address, party, ticket: null, started: false, over: false };
    calls.push(call);
    call.ticket = share.submit({ address, party }, () => {
      call.started = true;
      started.push(call);
      onStart?.(call);
    });
    return call;
  };
  const finish = (call: Call): void => {
    call.over = true;
    call.ticket!.done();
  };
  return { share, started, calls, submit, finish };
}

const op = fc.oneof(
  fc.record({ kind: fc.constant('submit' as const), address: fc.integer({ min: 0, max: 3 }), party: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('done' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
);

describe('FairShare guarantees (property)', () => {
  it('bounds what runs and waits, stays work-conserving, keeps each party FIFO, never starts a cancelled call', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 5 }),
        fc.array(op, { maxLength: 200 }),
        (capacity, addressInFlight, addressQueue, ops) => {
          const h = harness({ capacity, addressInFlight, addressQueue });
          const cancelled = new Set<number>();
          for (const o of ops) {
            if (o.kind === 'submit') {
              const a = `10.0.0.${o.address}`;
              const before = h.share.held(a);
              const wouldWait = before.waiting > 0 || before.running >= addressInFlight || h.share.running >= capacity;
              const c = h.submit(a, `party${o.party}`);
              // Refused exactly when it would wait and its address already has addressQueue waiting.
              expect(c.ticket === null).toBe(wouldWait && before.waiting >= addressQueue);
              if (c.ticket === null) c.over = true;
            } else if (o.kind === 'done') {
              const running = h.calls.filter((c) => c.started && !c.over);
              if (running.length > 0) h.finish(running[o.pick % running.length]!);
            } else {
              const waiting = h.calls.filter((c) => !c.started && !c.over);
              if (waiting.length > 0) {
                const c = waiting[o.pick % waiting.length]!;
                expect(c.ticket!.cancel()).toBe(true);
                c.over = true;
                cancelled.add(c.id);
              }
            }
            const running = h.calls.filter((c) => c.started && !c.over);
            expect(running.length).toBe(h.share.running);
            expect(running.length).toBeLessThanOrEqual(capacity);
            const byAddress = new Map<string, number>();
            for (const c of running) byAddress.set(c.address, (byAddress.get(c.address) ?? 0) + 1);
            for (const n of byAddress.values()) expect(n).toBeLessThanOrEqual(addressInFlight);
            // Work-conserving: nothing waits while its address and the pool both have room.
            const waiting = h.calls.filter((c) => !c.started && !c.over);
            for (const c of waiting) {
              expect(h.share.held(c.address).waiting).toBeLessThanOrEqual(addressQueue);
              const roomForIt = (byAddress.get(c.address) ?? 0) < addressInFlight && running.length < capacity;
              expect(roomForIt).toBe(false);
            }
          }
          for (const id of cancelled) expect(h.started.some((c) => c.id === id)).toBe(false);
          // FIFO within a party.
          const seen = new Map<string, number>();
          for (const c of h.started) {
            const key = `${c.address}/${c.party}`;
            expect(c.id).toBeGreaterThan(seen.get(key) ?? -1);
            seen.set(key, c.id);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('between two addresses always waiting, their starts never differ by more than one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 60 }), (capacity, burstA, burstB) => {
        const h = harness({ capacity, addressInFlight: capacity, addressQueue: 1_000 });
        for (let i = 0; i < burstA; i++) h.submit('a');
        for (let i = 0; i < burstB; i++) h.submit('b');
        // Finish calls one by one, oldest first; each frees one slot, so one call starts. Among the
        // starts made while both addresses had calls waiting, at every point a and b differ by ≤ 1.
        let diff = 0;
        while (h.calls.some((c) => !c.over)) {
          const bothWaiting = h.share.held('a').waiting > 0 && h.share.held('b').waiting > 0;
          const before = h.started.length;
          h.finish(h.started.find((c) => !c.over)!);
          if (bothWaiting) {
            expect(h.started.length).toBe(before + 1);
            diff += h.started[before]!.address === 'a' ? 1 : -1;
            expect(Math.abs(diff)).toBeLessThanOrEqual(1);
          }
        }
        expect(h.started.length).toBe(burstA + burstB);
      }),
    );
  });
});

describe('FairShare order', () => {
  it('alternates between a burst address and a later one, one slot at a time', () => {
    const h = harness({ capacity: 1, addressInFlight: 1, addressQueue: 100 });
    for (let i = 0; i < 6; i++) h.submit('attacker');
    for (let i = 0; i < 2; i++) h.submit('victim');
    while (h.calls.some((c) => !c.over)) h.finish(h.started.find((c) => !c.over)!);
    expect(h.started.map((c) => c.address)).toEqual(['attacker', 'victim', 'attacker', 'victim', 'attacker', 'attacker', 'attacker', 'attacker']);
  });

  it('leaves the other addresses every slot past one address in-flight bound', () => {
    const h = harness({ capacity: 8, addressInFlight: 3, addressQueue: 1_000 });
    for (let i = 0; i < 500; i++) h.submit('attacker');
    expect(h.share.held('attacker')).toEqual({ running: 3, waiting: 497 });
    const victim = h.submit('victim');
    expect(victim.started).toBe(true);
  });

  it('refuses past the address queue bound, and only that address', () => {
    const h = harness({ capacity: 2, addressInFlight: 1, addressQueue: 2 });
    const a = [h.submit('a'), h.submit('a'), h.submit('a'), h.submit('a')];
    expect(a.map((c) => c.ticket === null)).toEqual([false, false, false, true]);
    expect(h.submit('b').started).toBe(true);
  });

  it('shares an address between its parties, a party that floods waits its turn', () => {
    const h = harness({ capacity: 1, addressInFlight: 1, addressQueue: 100 });
    h.submit('shared', 'flooder'); // starts at once: the pool was free
    for (let i = 0; i < 3; i++) h.submit('shared', 'flooder');
    h.submit('shared', 'quiet');
    while (h.calls.some((c) => !c.over)) h.finish(h.started.find((c) => !c.over)!);
    // Round robin from the first wait on: the quiet party is served within one turn of the flooder's.
    expect(h.started.slice(1, 3).map((c) => c.party)).toContain('quiet');
  });

  it('gives a weight-2 address two starts for each of a weight-1 address', () => {
    const h = harness({ capacity: 1, addressInFlight: 5, addressQueue: 100, weight: (a) => (a === 'heavy' ? 2 : 1) });
    h.submit('light'); // starts at once: the pool was free
    for (let i = 0; i < 6; i++) h.submit('heavy');
    for (let i = 0; i < 3; i++) h.submit('light');
    while (h.calls.some((c) => !c.over)) h.finish(h.started.find((c) => !c.over)!);
    const after = h.started.slice(1).map((c) => c.address).join(',');
    expect(after).toBe('heavy,heavy,light,heavy,heavy,light,heavy,heavy,light');
  });

  it('a call that ends inside its own start lets the next one start, without reentering', () => {
    const h = harness({ capacity: 1, addressInFlight: 1, addressQueue: 100 });
    const first = h.submit('a');
    for (let i = 0; i < 3; i++) h.submit('a', 'p', (c) => h.finish(c));
    h.finish(first);
    expect(h.started.length).toBe(4);
    expect(h.share.running).toBe(0);
  });

  it('never refuses the calls of an address whose queue is unbounded, and still bounds its calls in flight', () => {
    const h = harness({ capacity: 4, addressInFlight: 2, addressQueue: 1, unboundedQueue: ['gateway'] });
    const calls = Array.from({ length: 50 }, () => h.submit('gateway'));
    expect(calls.every((c) => c.ticket !== null)).toBe(true);
    expect(h.share.held('gateway')).toEqual({ running: 2, waiting: 48 });
    expect(h.submit('client').started).toBe(true);
  });

  it('says how many more calls an address can hand over without a refusal', () => {
    const h = harness({ capacity: 4, addressInFlight: 2, addressQueue: 3 });
    expect(h.share.room('a')).toBe(5);
    for (let i = 0; i < 4; i++) h.submit('a');
    expect(h.share.room('a')).toBe(1);
    h.submit('a');
    expect(h.share.room('a')).toBe(0);
    expect(h.submit('a').ticket).toBeNull();
    expect(h.share.room('b')).toBe(5);
  });

  it('forgets an address once it holds nothing', () => {
    const h = harness({ capacity: 1, addressInFlight: 1, addressQueue: 100 });
    const a = h.submit('a');
    const b = h.submit('b');
    expect(b.ticket!.cancel()).toBe(true);
    expect(b.ticket!.cancel()).toBe(false);
    h.finish(a);
    expect(h.share.held('a')).toEqual({ running: 0, waiting: 0 });
    expect(h.share.held('b')).toEqual({ running: 0, waiting: 0 });
    expect(b.started).toBe(false);
    expect((h.share as unknown as { addresses: Map<string, unknown> }).addresses.size).toBe(0);
  });
});
