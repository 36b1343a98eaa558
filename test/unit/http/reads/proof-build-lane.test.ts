// The proof pages' build lane (src/http/reads/proof-build-lane.ts, ADR 0379): one build at a time,
// fair between client addresses and parties; each address's pages in progress bounded.
import { describe, expect, it } from 'vitest';
import { BuildLane } from '../../../../src/http/reads/proof-build-lane.js';
import { ApiError } from '../../../../src/http/errors.js';

/** A build the test ends by hand, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    build: async () => {
      log.push(name);
      await opened;
      return name;
    },
    open,
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the proof build lane', () => {
  it('builds one page at a time; an address asking many waits behind its own, not in front of another', async () => {
    const lane = new BuildLane(8);
    const log: string[] = [];
    const hog = [0, 1, 2, 3].map((i) => gate(log, `hog${i}`));
    const other = gate(log, 'other');
    const answers = hog.map((g) => lane.run({ address: '10.0.0.1', party: 'hog' }, 10_000, g.build));
    const otherAnswer = lane.run({ address: '10.0.0.2', party: 'other' }, 10_000, other.build);
    await settle();
    expect(log).toEqual(['hog0']);
    hog[0]!.open();
    await settle();
    // The other address's one page comes next, before the hog's three others.
    expect(log).toEqual(['hog0', 'other']);
    other.open();
    await expect(otherAnswer).resolves.toBe('other');
    for (const g of hog.slice(1)) g.open();
    await expect(Promise.all(answers)).resolves.toEqual(['hog0', 'hog1', 'hog2', 'hog3']);
    expect(log).toEqual(['hog0', 'other', 'hog1', 'hog2', 'hog3']);
  });

  it('within one address, parties take turns (within the fair share\'s bound of one page and one quantum); within one party, pages keep their order', async () => {
    const lane = new BuildLane(16);
    const log: string[] = [];
    const names = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5'];
    const runs = names.map((n) => lane.run({ address: '10.0.0.1', party: n[0]! }, 1000, async () => void log.push(n)));
    await Promise.all(runs);
    expect(log.filter((n) => n.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    expect(log.filter((n) => n.startsWith('b'))).toEqual(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    // Submitted all of a before any of b, yet b never falls more than two pages behind.
    for (let i = 1; i <= log.length; i++) {
      const prefix = log.slice(0, i);
      const a = prefix.filter((n) => n.startsWith('a')).length;
      const b = prefix.length - a;
      if (a < 6 && b < 6) expect(Math.abs(a - b)).toBeLessThanOrEqual(2);
    }
  });

  it('past PROOF_PAGES_PER_IP pages of one address in progress, the next is refused 429 budget_exhausted (proof_pages) before anything; other addresses are not', async () => {
    const lane = new BuildLane(2);
    const first = lane.enter('10.0.0.1');
    const second = lane.enter('10.0.0.1');
    let refused: unknown = null;
    try {
      lane.enter('10.0.0.1');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'budget_exhausted', status: 429, extra: { budget: 'proof_pages', retryAfterS: 1 } });
    const other = lane.enter('10.0.0.2');
    // A page answered (or failed) gives its place back, once however often it is released.
    first();
    first();
    const third = lane.enter('10.0.0.1');
    expect(() => lane.enter('10.0.0.1')).toThrow(ApiError);
    for (const release of [second, third, other]) release();
    lane.enter('10.0.0.1');
    lane.enter('10.0.0.1');
  });

  it('a build that fails is that request\'s failure alone: the lane goes on', async () => {
    const lane = new BuildLane(4);
    const failed = lane.run({ address: '10.0.0.1', party: 'p' }, 100, async () => {
      throw new Error('boom');
    });
    const next = lane.run({ address: '10.0.0.1', party: 'p' }, 100, async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
  });
});
