// The open interest feature (src/stream/open-interest-feed.ts) driven as the runtime drives it:
// seeded, then events in seq order, each group of events ended by `endOfBatch` (a lone event is a
// group of one). One frame per market per group, events the seed holds skipped, a hole after the
// seed makes the figure unknown (nothing sent, never wrong).
import { describe, expect, it } from 'vitest';
import { OpenInterestFeed } from '../../../src/stream/open-interest-feed.js';
import { parseSubscription } from '../../../src/stream/subscription.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import type { Frame } from '../../../src/contracts/frame.js';

const MARKETS = new Set(['BTC-PERP', 'ETH-PERP']);
const leg = (party: string, positionId: string, positionSize: string) => ({
  party, orderId: 'o', role: 'maker', side: 'buy', size: '1', price: '100', fee: '0', positionId, positionSize, entryPrice: '100', realizedPnl: '0', newBalance: '0',
});
const fill = (seq: number, market: string, ...legs: ReturnType<typeof leg>[]): EngineEvent => ({
  seq, kind: 'engine.order_filled', ts: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`, market,
  payload: { matchId: `m${seq}`, price: '100', size: '1', takerSide: 'buy', takerOrderId: 't', makerOrderId: 'm', legs },
});
const tick = (seq: number): EngineEvent => ({ seq, kind: 'engine.tick_start', ts: '2026-01-01T00:00:00.000Z', payload: {} });

function feed(seed: { asOfSeq: number | null; longs: { market: string; positionId: string; size: string }[] } | null) {
  const published: Frame[] = [];
  const warnings: string[] = [];
  let head: number | null = null;
  const f = new OpenInterestFeed({
    readSeed: seed ? async () => seed : null,
    publish: (frame) => (published.push(frame), 1),
    head: () => head,
    logger: { warn: (_o, msg) => warnings.push(msg) },
  });
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
  return { f, published, warnings, deliver, group };
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

  it('a hole after the seed, a replaced history or no database: nothing is sent', async () => {
    const gap = feed({ asOfSeq: null, longs: [] });
    await gap.f.start();
    expect(values(gap.deliver(fill(1, 'BTC-PERP', leg('a', 'a1', '1'))))).toEqual([['BTC-PERP', 1, '1.0000000000']]);
    expect(gap.deliver(fill(3, 'BTC-PERP', leg('a', 'a1', '2')))).toEqual([]); // seq 2 never came
    expect(gap.deliver(fill(4, 'BTC-PERP', leg('a', 'a1', '3')))).toEqual([]);
    expect(gap.f.snapshot(sub('kinds=open_interest.update'))).toBeNull();
    expect(gap.warnings).toHaveLength(1);

    const replaced = feed({ asOfSeq: 0, longs: [] });
    await replaced.f.start();
    replaced.f.replaced();
    expect(replaced.deliver(fill(1, 'BTC-PERP', leg('a', 'a1', '1')))).toEqual([]);

    const none = feed(null);
    await none.f.start();
    expect(none.deliver(fill(1, 'BTC-PERP', leg('a', 'a1', '1')))).toEqual([]);
    expect(none.f.snapshot(sub('kinds=open_interest.update'))).toBeNull();
  });
});
