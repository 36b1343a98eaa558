// RecentTrades: the trade tape kept from live frames and seeded from the database. A seed that
// lands after live trades merges with them (seq order, one frame per seq, the newest LAST_TRADES);
// one read before an engine history replacement is dropped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LAST_TRADES, RecentTrades } from '../../../src/stream/recent-trades.js';
import { parseSubscription } from '../../../src/stream/subscription.js';
import type { Frame } from '../../../src/contracts/frame.js';

const trade = (seq: number, market: string, origin = 'live'): Frame => ({
  kind: 'trade',
  seq,
  ts: new Date(1_700_000_000_000 + seq).toISOString(),
  market,
  payload: { matchId: `m${seq}`, side: 'buy', size: '1.0000000000', price: `${seq}.0000000000`, takerOrderId: `t${seq}`, makerOrderId: `m${seq}-${origin}` },
});
const every = parseSubscription(new URLSearchParams('kinds=trade'), null);
const seqsOf = (tape: RecentTrades, market: string) => tape.snapshot(every).filter((f) => f.market === market).map((f) => f.seq);

describe('RecentTrades.seed', () => {
  it('merges a seed read while live trades arrived: seq order, no duplicate, the newest LAST_TRADES per market', async () => {
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 120 }), // the seed's newest seq (where the stream starts after)
        fc.integer({ min: 0, max: 80 }), // live trades after it
        fc.integer({ min: 0, max: 10 }), // of which the seed also read (a mirror ahead of the start point)
        fc.integer({ min: 0, max: 80 }), // live trades that arrive while the seed is read
        async (upTo, liveBefore, overlap, liveDuring) => {
          const tape = new RecentTrades();
          const all = Array.from({ length: upTo + liveBefore + liveDuring }, (_, i) => i + 1);
          for (const s of all.slice(upTo, upTo + liveBefore)) tape.observe(trade(s, 'BTC-PERP'));
          let release: (frames: Frame[]) => void = () => {};
          const landed = tape.seed(() => new Promise<Frame[]>((resolve) => (release = resolve)));
          for (const s of all.slice(upTo + liveBefore)) tape.observe(trade(s, 'BTC-PERP'));
          const seeded = all.slice(Math.max(0, upTo - LAST_TRADES), Math.min(all.length, upTo + overlap));
          release([...seeded.map((s) => trade(s, 'BTC-PERP', 'seed')), trade(1, 'ETH-PERP', 'seed')]);
          expect(await landed).toBe(true);
          expect(seqsOf(tape, 'BTC-PERP')).toEqual(all.slice(-LAST_TRADES));
          expect(seqsOf(tape, 'ETH-PERP')).toEqual([1]);
          // The live frame wins where both have a seq (they are the same frame; the live one was published).
          for (const f of tape.snapshot(every)) if (f.seq > upTo && f.market === 'BTC-PERP') expect(f.payload.makerOrderId).toMatch(/-live$/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a seed read before an engine history replacement is dropped', async () => {
    const tape = new RecentTrades();
    let release: (frames: Frame[]) => void = () => {};
    const landed = tape.seed(() => new Promise<Frame[]>((resolve) => (release = resolve)));
    tape.reset();
    tape.observe(trade(3, 'BTC-PERP'));
    release([trade(1, 'BTC-PERP', 'seed'), trade(2, 'BTC-PERP', 'seed')]);
    expect(await landed).toBe(false);
    expect(seqsOf(tape, 'BTC-PERP')).toEqual([3]);
  });

  it('a failed read changes nothing', async () => {
    const tape = new RecentTrades();
    tape.observe(trade(5, 'BTC-PERP'));
    await expect(tape.seed(() => Promise.reject(new Error('database unavailable')))).rejects.toThrow('database unavailable');
    expect(seqsOf(tape, 'BTC-PERP')).toEqual([5]);
  });
});
