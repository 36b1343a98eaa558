// The open interest feature (src/stream/open-interest-feed.ts) driven as the runtime drives it:
// seeded, then events in seq order, each group of events ended by `endOfBatch` (a lone event is a
// group of one). One frame per market per group, events the seed holds skipped, a hole after the
// seed makes the figure unknown (nothing sent, never wrong).
import { afterEach, describe, expect, it } from 'vitest';
import { OpenInterestFeed } from '../../../src/stream/open-interest-feed.js';
import { parseSubscription } from '../../../src/stream/subscription.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import type { Frame } from '../../../src/contracts/frame.js';
import type { OpenInterestSeed } from '../../../src/db/queries/open-interest.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const MARKETS = new Set(['BTC-PERP', 'ETH-PERP']);
const feeds: OpenInterestFeed[] = [];
afterEach(() => {
  for (const f of feeds.splice(0)) f.stop();
});
/** Until the feed has read the mirror twice more (every read after the call sees the mirror as it is now). */
async function reread(mirror: { reads: number; clock: VirtualClock }): Promise<void> {
  const until = mirror.reads + 2;
  for (let i = 0; i < 500 && mirror.reads < until; i++) await mirror.clock.advance(10);
}
const leg = (party: string, positionId: string, positionSize: string) => ({
  party, orderId: 'o', role: 'maker', side: 'buy', size: '1', price: '100', fee: '0', positionId, positionSize, entryPrice: '100', realizedPnl: '0', newBalance: '0',
});
const fill = (seq: number, market: string, ...legs: ReturnType<typeof leg>[]): EngineEvent => ({
  seq, kind: 'engine.order_filled', ts: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`, market,
  payload: { matchId: `m${seq}`, price: '100', size: '1', takerSide: 'buy', takerOrderId: 't', makerOrderId: 'm', legs },
});
const tick = (seq: number): EngineEvent => ({ seq, kind: 'engine.tick_start', ts: '2026-01-01T00:00:00.000Z', payload: {} });

/** A feed whose mirror is `mirror.seed` (changed by a test as an indexer would change it), read again every 10 ms of `mirror.clock` when it must catch up. */
function feed(seed: OpenInterestSeed | null) {
  const published: Frame[] = [];
  const warnings: string[] = [];
  let head: number | null = null;
  const mirror = { seed, reads: 0, clock: new VirtualClock() };
  const f = new OpenInterestFeed({
    // A mirror set to null is a database that does not answer (the read rejects).
    readSeed: seed
      ? async () => {
          mirror.reads++;
          if (!mirror.seed) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          return mirror.seed;
        }
      : null,
    publish: (frame) => (published.push(frame), 1),
    head: () => head,
    logger: { warn: (_o, msg) => warnings.push(msg) },
    reseedMs: 10,
    clock: mirror.clock,
  });
  feeds.push(f);
  f.markets(MARKETS);
  /** Events as one group: each delivered, then the group's end; the frames it published. */
  const group = (...events: EngineEvent[]) => {
    const before = published.length;
    for (const e of events) {
      head = e.seq;
      f.event(e);
    }
    f.endOfBatch();
    return published.slice(before);
  };
  const deliver = (e: EngineEvent) => group(e);
  return { f, published, warnings, deliver, group, mirror };
}
const sub = (q: string) => parseSubscription(new URLSearchParams(q), MARKETS);
const values = (frames: readonly Frame[]) => frames.map((x) => [x.market, x.seq, x.payload.openInterest]);

describe('OpenInterestFeed', () => {
  it('skips what the seed holds, sends a change per lone event and one per market per group', async () => {
    const { f, deliver, group } = feed({ asOfSeq: 3, longs: [{ market: 'BTC-PERP', positionId: 'a1', size: '2' }] });
    await f.start();
    expect(deliver(fill(3, 'BTC-PERP', leg('a', 'a1', '7')))).toEqual([]); // in the seed already
    expect(values(deliver(fill(4, 'BTC-PERP', leg('b', 'b1', '1'), leg('a', 'a1', '1'))))).toEqual([]); // 2 → 1 + 1: unchanged
    expect(values(deliver(fill(5, 'BTC-PERP', leg('b', 'b1', '3'))))).toEqual([['BTC-PERP', 5, '4.0000000000']]);
    const frames = group(fill(6, 'BTC-PERP', leg('c', 'c1', '1')), fill(7, 'ETH-PERP', leg('c', 'e1', '0.5')), tick(8), fill(9, 'BTC-PERP', leg('c', 'c1', '2')));
    expect(values(frames)).toEqual([['BTC-PERP', 9, '6.0000000000'], ['ETH-PERP', 7, '0.5000000000']]);
    // Snapshot: opt-in, every known market (zero included), narrowed by markets, at the head.
    expect(f.snapshot(sub(''))).toBeNull();
    expect(values(f.snapshot(sub('kinds=open_interest.update'))!.frames)).toEqual([['BTC-PERP', 9, '6.0000000000'], ['ETH-PERP', 9, '0.5000000000']]);
    expect(values(f.snapshot(sub('kinds=open_interest.update&markets=ETH-PERP'))!.frames)).toEqual([['ETH-PERP', 9, '0.5000000000']]);
  });

  it('a hole after the seed, or no database: nothing is sent while the mirror cannot vouch for the figure', async () => {
    const gap = feed({ asOfSeq: null, longs: [] });
    await gap.f.start();
    expect(values(gap.deliver(fill(1, 'BTC-PERP', leg('a', 'a1', '1'))))).toEqual([['BTC-PERP', 1, '1.0000000000']]);
    expect(gap.deliver(fill(3, 'BTC-PERP', leg('a', 'a1', '2')))).toEqual([]); // seq 2 never came
    expect(gap.deliver(fill(4, 'BTC-PERP', leg('a', 'a1', '3')))).toEqual([]);
    await reread(gap.mirror); // the mirror is read again (still empty): no use
    expect(gap.mirror.reads).toBeGreaterThan(2);
    expect(gap.published).toHaveLength(1);
    expect(gap.f.snapshot(sub('kinds=open_interest.update'))).toBeNull();
    expect(gap.warnings).toHaveLength(1);

    const none = feed(null);
    await none.f.start();
    expect(none.deliver(fill(1, 'BTC-PERP', leg('a', 'a1', '1')))).toEqual([]);
    none.f.replaced(0);
    expect(none.deliver(fill(1, 'BTC-PERP', leg('a', 'a1', '1')))).toEqual([]);
    expect(none.f.snapshot(sub('kinds=open_interest.update'))).toBeNull();
  });

  it('a history replaced from its start is followed from nothing: every market sent at the first group, then changes', async () => {
    const { f, deliver, group } = feed({ asOfSeq: 3, longs: [{ market: 'BTC-PERP', positionId: 'old', size: '9' }] });
    await f.start();
    f.replaced(0);
    expect(values(group(tick(1), fill(2, 'ETH-PERP', leg('n', 'n1', '2'))))).toEqual([['BTC-PERP', 2, '0.0000000000'], ['ETH-PERP', 2, '2.0000000000']]);
    expect(values(deliver(fill(3, 'BTC-PERP', leg('n', 'n2', '1'))))).toEqual([['BTC-PERP', 3, '1.0000000000']]);
    expect(values(f.snapshot(sub('kinds=open_interest.update'))!.frames)).toEqual([['BTC-PERP', 3, '1.0000000000'], ['ETH-PERP', 3, '2.0000000000']]);
  });

  it('a history replaced past its start: silent until the mirror holds an event this feed delivered, then the seed + the fills since', async () => {
    const stale = fill(7, 'BTC-PERP', leg('old', 'o1', '5')); // the old history's seq 7, still in the mirror
    const { f, published, deliver, group, mirror } = feed({ asOfSeq: 7, longs: [{ market: 'BTC-PERP', positionId: 'o1', size: '5' }], asOf: stale });
    await f.start();
    f.replaced(4); // the new history's events up to 4 never reach the feed
    const e5 = fill(5, 'BTC-PERP', leg('n', 'n1', '1'));
    const e6 = tick(6);
    const e7 = fill(7, 'BTC-PERP', leg('n', 'n1', '3'), leg('m', 'm1', '1'));
    expect(group(e5, e6, e7)).toEqual([]);
    await reread(mirror);
    // The mirror's seq 7 is the old history's: not used, though its seq is one the feed delivered.
    expect(published).toEqual([]);
    expect(f.snapshot(sub('kinds=open_interest.update'))).toBeNull();
    // The indexer rebuilt the mirror from the new history, up to seq 6: seeded there, seq 7's fill on top.
    mirror.seed = { asOfSeq: 6, longs: [{ market: 'BTC-PERP', positionId: 'n1', size: '1' }, { market: 'ETH-PERP', positionId: 'e1', size: '4' }], asOf: e6 };
    await reread(mirror);
    expect(values(published)).toEqual([['BTC-PERP', 7, '4.0000000000'], ['ETH-PERP', 7, '4.0000000000']]);
    expect(values(deliver(fill(8, 'BTC-PERP', leg('m', 'm1', '0'))))).toEqual([['BTC-PERP', 8, '3.0000000000']]);
    const reads = mirror.reads;
    await mirror.clock.advance(50);
    expect(mirror.reads).toBe(reads); // known again: the mirror is no longer read
  });

  it('after a hole, known again once the mirror holds the events past it (a seed from before the hole is never used)', async () => {
    const { f, published, deliver, group, mirror } = feed({ asOfSeq: 1, longs: [{ market: 'BTC-PERP', positionId: 'a1', size: '1' }], asOf: tick(1) });
    await f.start();
    expect(deliver(tick(2))).toEqual([]);
    const e4 = fill(4, 'BTC-PERP', leg('a', 'a1', '5')); // seq 3 (a fill of b1) never came
    const e5 = fill(5, 'ETH-PERP', leg('c', 'c1', '2'));
    expect(group(e4, e5)).toEqual([]);
    // The mirror as of seq 2 (before the hole) is of this history but misses seq 3: not used.
    mirror.seed = { asOfSeq: 2, longs: [{ market: 'BTC-PERP', positionId: 'a1', size: '1' }], asOf: tick(2) };
    await reread(mirror);
    expect(published).toEqual([]);
    // The indexer wrote seq 3 and 4: seeded as of 4 (b1 held 2), seq 5's fill on top.
    mirror.seed = { asOfSeq: 4, longs: [{ market: 'BTC-PERP', positionId: 'a1', size: '5' }, { market: 'BTC-PERP', positionId: 'b1', size: '2' }], asOf: e4 };
    await reread(mirror);
    expect(values(published)).toEqual([['BTC-PERP', 5, '7.0000000000'], ['ETH-PERP', 5, '2.0000000000']]);
  });

  it('a database away at start: unknown, then known once the mirror holds an event this feed delivered (no restart)', async () => {
    const { f, published, warnings, group, mirror } = feed({ asOfSeq: 0, longs: [] });
    const seed = mirror.seed;
    (mirror as { seed: OpenInterestSeed | null }).seed = null; // the database does not answer
    await f.start();
    expect(warnings).toEqual(['stream: open interest unknown (the mirror could not be read at start); sent once the mirror holds the events streamed']);
    // Live from the engine's head: the first event delivered is 11.
    const e11 = fill(11, 'BTC-PERP', leg('a', 'a1', '3'));
    const e12 = fill(12, 'ETH-PERP', leg('b', 'b1', '1'));
    expect(group(e11, e12)).toEqual([]);
    expect(f.snapshot(sub('kinds=open_interest.update'))).toBeNull();
    // The database is back, its mirror as of 11 (a1 held 3, and an older epoch of c): seeded there, 12's fill on top.
    mirror.seed = { ...seed!, asOfSeq: 11, longs: [{ market: 'BTC-PERP', positionId: 'a1', size: '3' }, { market: 'BTC-PERP', positionId: 'c1', size: '2' }], asOf: e11 };
    await reread(mirror);
    expect(values(published)).toEqual([['BTC-PERP', 12, '5.0000000000'], ['ETH-PERP', 12, '1.0000000000']]);
    expect(warnings.at(-1)).toBe('stream: open interest known again (seeded from the mirror)');
  });

  // Review probe (review-probe branch): a history replacement that reaches the feed before its first
  // event, after a failed seed read at start, must not leave the figure unknown for good.
  it('a database away at start, then a history replaced from its start before any event: followed from nothing', async () => {
    const { f, group, mirror } = feed({ asOfSeq: 0, longs: [] });
    (mirror as { seed: OpenInterestSeed | null }).seed = null; // the database does not answer at start
    await f.start();
    f.replaced(0); // the engine restarted with a new history before any event reached the feed
    expect(values(group(tick(1), fill(2, 'ETH-PERP', leg('n', 'n1', '2'))))).toEqual([['BTC-PERP', 2, '0.0000000000'], ['ETH-PERP', 2, '2.0000000000']]);
  });

  it('a database away at start, then a history replaced past its start before any event: known once the mirror holds it', async () => {
    const { f, published, group, mirror } = feed({ asOfSeq: 0, longs: [] });
    (mirror as { seed: OpenInterestSeed | null }).seed = null;
    await f.start();
    f.replaced(4);
    const e5 = fill(5, 'BTC-PERP', leg('n', 'n1', '1'));
    const e6 = fill(6, 'BTC-PERP', leg('n', 'n1', '2'));
    expect(group(e5, e6)).toEqual([]);
    // The database is back, its mirror of the new history as of 5: seeded there, 6's fill on top.
    mirror.seed = { asOfSeq: 5, longs: [{ market: 'BTC-PERP', positionId: 'n1', size: '1' }], asOf: e5 };
    await reread(mirror);
    expect(values(published)).toEqual([['BTC-PERP', 6, '2.0000000000'], ['ETH-PERP', 6, '0.0000000000']]);
  });

  it('a mirror ahead of the feed is used when its newest event arrives and matches', async () => {
    const { f, published, group, mirror } = feed({ asOfSeq: 0, longs: [] });
    await f.start();
    const e3 = fill(3, 'BTC-PERP', leg('n', 'n1', '2'));
    mirror.seed = { asOfSeq: 3, longs: [{ market: 'BTC-PERP', positionId: 'n1', size: '2' }], asOf: e3 };
    f.replaced(1);
    await reread(mirror); // read while the feed is at 1: held
    expect(published).toEqual([]);
    expect(values(group(tick(2), e3))).toEqual([['BTC-PERP', 3, '2.0000000000'], ['ETH-PERP', 3, '0.0000000000']]);
  });
});
