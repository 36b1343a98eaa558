// /v1/stream refuses unknown query parameters (a misspelt filter would otherwise stream everything)
// and knows exactly the agreed list.
import { describe, expect, it } from 'vitest';
import { parseSubscription, STREAM_QUERY_PARAMETERS } from '../../../src/stream/subscription.js';

const parse = (q: string) => parseSubscription(new URLSearchParams(q), null);

describe('stream query parameters', () => {
  it('refuses a misspelt filter with 400 naming it', () => {
    expect(() => parse('market=BTC-PERP')).toThrow(/unknown query parameter "market"/);
    expect(() => parse('kinds=trade&Kinds=trade')).toThrow(/unknown query parameter "Kinds"/);
  });

  it('knows exactly the agreed list, including epoch, heartbeat, snapshot, compress and the book view (depth, group, throttle)', () => {
    expect([...STREAM_QUERY_PARAMETERS].sort()).toEqual(
      ['kinds', 'markets', 'intervals', 'party', 'since', 'control', 'user', 'sessionId', 'sig', 'epoch', 'heartbeat', 'snapshot', 'compress', 'depth', 'group', 'throttle'].sort(),
    );
    expect(() => parse('markets=BTC-PERP&since=1&epoch=e1&heartbeat=10&snapshot=false')).not.toThrow();
  });

  it('takes depth and group only with orderbook.delta, and checks them', () => {
    expect(parse('kinds=trade').book).toBeNull();
    expect(() => parse('kinds=orderbook.snapshot&depth=5')).toThrow(/add orderbook.delta/);
    expect(() => parse('group=sig:3')).toThrow(/add orderbook.delta/);
    const sub = parse('kinds=orderbook.delta&depth=5&group=sig:3');
    expect(sub.book).toEqual({ depth: 5, grouping: { kind: 'sig', figures: 3 } });
    expect([...sub.kinds!].sort()).toEqual(['orderbook.delta', 'orderbook.snapshot']);
    expect(parse('kinds=orderbook.delta').book).toEqual({ depth: 20, grouping: { kind: 'none' } });
    expect(parse('kinds=orderbook.delta&group=tick:0.5').book?.grouping).toEqual({ kind: 'tick', tick: 5_000_000_000n });
    for (const bad of ['depth=0', 'depth=1001', 'depth=x', 'group=sig:1', 'group=sig:6', 'group=tick:0', 'group=tick:-1', 'group=lots']) {
      expect(() => parse(`kinds=orderbook.delta&${bad}`), bad).toThrow(/depth|group/);
    }
  });
});
