// Replay: verifyAccount advances it as batches are checked, in any order (ADR 0385), each told with
// its proof, held until replayed (ADR 0386); the ledger it ends with must be the one a replay of the
// finished history gives (checkAccount's, from nothing):
// the same balance, positions, counts, discrepancies, end seq and stopping batch, whatever the order
// and whichever batches were told before the end, with a failed or pending batch anywhere.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../sandbox/engine/core.js';
import { Replay } from '../../../packages/client/src/verify/replay.js';
import { holdersOf } from '../../../packages/client/src/verify/scheme.js';
import type { UserBatchProof } from '../../../packages/client/src/generated/wire.js';
import type { BatchVerdict } from '../../../packages/client/src/verify/verify-batch.js';

const A = `a::${'a'.repeat(64)}`;
const M = `m::${'b'.repeat(64)}`;

/** The party's events from the reference engine: deposits, fills both ways, a withdrawal. */
function partyEvents(): Array<{ seq: number }> {
  const e = new EngineCore();
  e.deposit({ party: A, amount: '1000', txId: '0xaa' }, 'chain');
  e.deposit({ party: M, amount: '100000' }, 'faucet');
  for (let i = 0; i < 6; i++) {
    const side = i % 3 === 2 ? 'sell' : 'buy';
    e.placeOrder(M, { market: 'ETH-PERP', side: side === 'buy' ? 'sell' : 'buy', type: 'limit', size: '1', price: String(2000 + i) });
    e.placeOrder(A, { market: 'ETH-PERP', side, type: 'limit', size: '1', price: String(2000 + i), tif: 'ioc' });
  }
  e.requestWithdrawal(A, { amount: '10' });
  e.tick();
  return e.log.eventsSince(0).filter((x) => holdersOf(x as never).includes(A));
}

const EVENTS = partyEvents();

const snapshot = (r: Replay) => ({
  balance: r.ledger.balance,
  positions: [...r.ledger.positions],
  events: r.ledger.events,
  legs: r.ledger.legs,
  discrepancies: r.ledger.discrepancies,
  committedSeq: r.committedSeq,
  stoppedAt: r.stoppedAt?.userSeq ?? null,
});

describe('Replay', () => {
  it('ends as a replay of the finished history, whatever order the batches were told in', () => {
    expect(EVENTS.length).toBeGreaterThan(10);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.record({ at: fc.nat(), status: fc.constantFrom('failed' as const, 'pending' as const) })),
        fc.array(fc.nat()),
        fc.array(fc.boolean()),
        (batches, odd, shuffle, told) => {
          // The events cut into `batches` user batches (the last takes the rest).
          const size = Math.ceil(EVENTS.length / batches);
          const proofs = new Map<number, UserBatchProof>();
          const verdicts: BatchVerdict[] = [];
          for (let i = 0; i < batches; i++) {
            const userSeq = i + 1;
            proofs.set(userSeq, { party: A, userSeq, events: EVENTS.slice(i * size, (i + 1) * size) } as unknown as UserBatchProof);
            const status = odd && odd.at % batches === i ? odd.status : 'verified';
            verdicts.push(
              status === 'verified' ? ({ status, party: A, userSeq } as BatchVerdict)
              : status === 'pending' ? { status, party: A, userSeq, eventCount: 0, gatewayStatus: 'pending' }
              : { status, party: A, userSeq, step: 'userRoot', message: 'differs', gatewayStatus: 'verified' },
            );
          }
          const whole = new Replay(A, 20, (s) => proofs.get(s)).finish(verdicts);
          // Some batches told as they are "checked", in a shuffled order, then the end.
          const order = verdicts.map((_, i) => i);
          shuffle.forEach((k, i) => {
            const j = k % order.length;
            [order[i % order.length], order[j]] = [order[j]!, order[i % order.length]!];
          });
          // A batch told is told with its proof (as verifyHistory's onBatch does), which the replay
          // must hold until its turn: its proof is not to be had otherwise.
          const withProof = new Set<number>();
          const live = new Replay(A, 20, (s) => (withProof.has(s) ? undefined : proofs.get(s)));
          order.forEach((i, n) => {
            if (!(told[n] ?? true)) return;
            withProof.add(i + 1);
            live.checked(i, verdicts[i]!, proofs.get(i + 1));
          });
          live.finish(verdicts);
          expect(snapshot(live)).toEqual(snapshot(whole));
          expect(whole.stoppedAt?.userSeq ?? null).toBe(odd ? (odd.at % batches) + 1 : null);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('replays nothing past a batch not yet told, and goes on once it is', () => {
    const proofs = new Map<number, UserBatchProof>([
      [1, { party: A, userSeq: 1, events: EVENTS.slice(0, 3) } as unknown as UserBatchProof],
      [2, { party: A, userSeq: 2, events: EVENTS.slice(3) } as unknown as UserBatchProof],
    ]);
    const verified = (userSeq: number) => ({ status: 'verified', party: A, userSeq }) as BatchVerdict;
    const r = new Replay(A, 20, (s) => proofs.get(s));
    r.checked(1, verified(2));
    expect([r.ledger.events, r.committedSeq]).toEqual([0, 0]);
    r.checked(0, verified(1));
    expect([r.ledger.events, r.committedSeq]).toEqual([EVENTS.length, EVENTS.at(-1)!.seq]);
  });
});
