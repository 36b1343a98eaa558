import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fromDomainError } from '../../../src/http/errors.js';
import { matches, parseSubscription, type Subscription } from '../../../src/stream/subscription.js';
import { SubscriberIndex } from '../../../src/stream/registry.js';
import { StreamClient } from '../../../src/stream/client.js';
import type { Frame } from '../../../src/contracts/frame.js';
import { Registry } from 'prom-client';
import { BookStream } from '../../../src/stream/book-stream.js';
import { bookViewSpec } from '../../../src/stream/book-subscription.js';
import { bookViewOf } from '../../../src/stream/book-views.js';
import { eventually } from '../../support/eventually.js';

const A = `alice::${'a'.repeat(64)}`;
const B = `bob::${'b'.repeat(64)}`;
const KNOWN = new Set(['BTC-PERP', 'ETH-PERP']);
const q = (s: string) => new URLSearchParams(s);

function parseError(query: string): { status: number; code: string; error: string } {
  try {
    parseSubscription(q(query), KNOWN);
  } catch (err) {
    // As the edge answers it (a refused upgrade, or the plain GET).
    const e = fromDomainError(err)!;
    return { status: e.status, code: e.code, error: e.message };
  }
  throw new Error('expected a 400');
}

describe('stream query parameters', () => {
  it('accepts comma lists and repeats alike', () => {
    const s = parseSubscription(q('kinds=trade,candle.close&kinds=trade&markets=BTC-PERP&intervals=1m&intervals=1h&party=' + A), KNOWN);
    expect([...s.kinds!]).toEqual(['trade', 'candle.close']);
    expect([...s.markets!]).toEqual(['BTC-PERP']);
    expect([...s.intervals!]).toEqual(['1m', '1h']);
    expect([...s.parties]).toEqual([A]);
    expect(s.since).toBeNull();
    expect(s.proof).toBeNull();
  });

  it('rejects unknown kinds and intervals, malformed parties, markets and since with 400 naming the parameter', () => {
    expect(parseError('kinds=trade,trades')).toMatchObject({ status: 400, code: 'bad_request' });
    expect(parseError('kinds=trades').error).toContain('"kinds": "trades" is not a frame kind');
    expect(parseError('intervals=2m').error).toContain('"intervals": "2m" is not an interval');
    expect(parseError('party=alice').error).toContain('"party": "alice" is not a party id');
    expect(parseError('markets=BTC%20PERP').error).toContain('"markets"');
    expect(parseError('since=-1').error).toContain('"since"');
    expect(parseError('since=1&since=2').error).toContain('"since" must be given once');
    expect(parseError('user=' + A).error).toContain('needs all of "user", "sessionId" and "sig"');
  });

  it('rule 1: a markets filter naming no known market is ignored; one known market keeps the filter', () => {
    const none = parseSubscription(q('markets=btc-perp,DOGE'), KNOWN);
    expect(none.markets).toBeNull();
    expect(none.marketsIgnored).toBe(true);
    expect(none.requestedMarkets).toEqual(['btc-perp', 'DOGE']);
    const some = parseSubscription(q('markets=btc-perp,ETH-PERP'), KNOWN);
    expect([...some.markets!]).toEqual(['btc-perp', 'ETH-PERP']);
    expect(some.marketsIgnored).toBe(false);
    // Before the engine's market list is known, the filter is kept as asked.
    expect(parseSubscription(q('markets=DOGE'), null).markets).toEqual(new Set(['DOGE']));
  });

  it('filter semantics: intervals narrow candles only; party is opt-in for user-scoped frames', () => {
    const s = parseSubscription(q('intervals=1h&markets=BTC-PERP&party=' + A), KNOWN);
    const base = { seq: 1, ts: '2026-11-21T10:00:00.000Z', payload: {} };
    expect(matches(s, { ...base, kind: 'candle.update', market: 'BTC-PERP', interval: '1h' })).toBe(true);
    expect(matches(s, { ...base, kind: 'candle.update', market: 'BTC-PERP', interval: '1m' })).toBe(false);
    expect(matches(s, { ...base, kind: 'trade', market: 'BTC-PERP' })).toBe(true);
    expect(matches(s, { ...base, kind: 'trade', market: 'ETH-PERP' })).toBe(false);
    expect(matches(s, { ...base, kind: 'engine.tick_start' })).toBe(true); // no market: not filtered by markets
    expect(matches(s, { ...base, kind: 'balance.update', userParty: A })).toBe(true);
    expect(matches(s, { ...base, kind: 'balance.update', userParty: B })).toBe(false);
    expect(matches(s, { ...base, kind: 'inbound.deposit', party: B })).toBe(false);
    const anon = parseSubscription(q(''), KNOWN);
    expect(matches(anon, { ...base, kind: 'position.update', market: 'BTC-PERP', userParty: A })).toBe(false);
    expect(matches(anon, { ...base, kind: 'engine.order_filled', market: 'BTC-PERP' })).toBe(true);
  });
});

describe('subscriber index', () => {
  const KINDS = ['trade', 'candle.update', 'position.update', 'balance.update', 'engine.tick_start', 'engine.order_placed'];
  const MARKETS = ['BTC-PERP', 'ETH-PERP', 'SOL-PERP'];

  const subArb = fc.record({
    kinds: fc.option(fc.subarray(KINDS, { minLength: 1 }), { nil: null }),
    markets: fc.option(fc.subarray(MARKETS, { minLength: 1 }), { nil: null }),
    intervals: fc.option(fc.subarray(['1m', '1h'] as const, { minLength: 1 }), { nil: null }),
    parties: fc.subarray([A, B]),
  });
  const frameArb: fc.Arbitrary<Frame> = fc
    .record({
      kind: fc.constantFrom(...KINDS),
      market: fc.constantFrom(...MARKETS),
      interval: fc.constantFrom('1m' as const, '1h' as const),
      party: fc.constantFrom(A, B),
    })
    .map(({ kind, market, interval, party }) => {
      const f: Frame = { kind, seq: 1, ts: '2026-11-21T10:00:00.000Z', payload: {} };
      if (kind !== 'balance.update' && kind !== 'engine.tick_start') f.market = market;
      if (kind === 'candle.update') f.interval = interval;
      if (kind === 'position.update' || kind === 'balance.update') f.userParty = party;
      if (kind === 'engine.order_placed') f.party = party;
      return f;
    });

  it('property: recipients are exactly the clients whose filters match, each once, also after removals', () => {
    fc.assert(
      fc.property(fc.array(subArb, { maxLength: 30 }), fc.array(frameArb, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 10 }), (subs, frames, removeN) => {
        const subsOf = subs.map((s) =>
          indexedSub(s.kinds, s.markets, { intervals: s.intervals ? new Set(s.intervals) : null, parties: new Set(s.parties) }),
        );
        expectRecipientsMatch(subsOf, removeN, frames);
      }),
      { numRuns: 300 },
    );
  });

  it('property: book frames (polled, and made for each view) reach exactly the clients whose filters match', async () => {
    // Real view frames: a BookStream seeded for every market (its snapshot frames of each view when
    // the seed lands, then one delta per view for an order placed on each market).
    const VIEWS: Array<[string | null, string | null]> = [[null, null], ['5', null], ['20', 'tick:5'], ['20', 'sig:2']];
    const made: Frame[] = [];
    const books = new BookStream({
      readBook: async (market) => ({ market, seq: 1, bids: [['99', '1']], asks: [['101', '1']] }),
      publish: (f) => (made.push(f), 1),
      registry: new Registry(),
      logger: { warn: () => {}, info: () => {} },
    });
    const viewSub = (depth: string | null, group: string | null) => ({ kinds: new Set(['orderbook.delta', 'orderbook.snapshot']), markets: new Set(MARKETS), book: bookViewSpec(depth, group) }) as unknown as Subscription;
    for (const [depth, group] of VIEWS) books.snapshot(viewSub(depth, group));
    await eventually(() => made.filter((f) => f.kind === 'orderbook.snapshot' && bookViewOf(f)).length === VIEWS.length * MARKETS.length, 'every view seeded');
    // Each event a group of its own, ended as the runtime ends it (LiveFeature.endOfBatch).
    MARKETS.forEach((market, i) => {
      books.event({ seq: 2 + i, kind: 'engine.order_placed', ts: '2026-11-25T00:00:00.000Z', market, party: A, payload: { order: { orderId: `o${i}`, side: 'buy', type: 'limit', tif: 'gtc', price: '100', size: '2', filledSize: '0', status: 'open' } } });
      books.endOfBatch();
    });
    books.stop();
    expect(made.filter((f) => f.kind === 'orderbook.snapshot' && bookViewOf(f)).length).toBe(VIEWS.length * MARKETS.length);
    expect(made.filter((f) => f.kind === 'orderbook.delta' && bookViewOf(f)).length).toBe(VIEWS.length * MARKETS.length);
    const polled = MARKETS.map((market): Frame => ({ kind: 'orderbook.snapshot', seq: 1, ts: '2026-11-25T00:00:00.000Z', market, payload: {} }));
    const frames = [...made, ...polled];

    const bookSubArb = fc.record({
      kinds: fc.option(fc.subarray(['orderbook.delta', 'orderbook.snapshot', 'trade'], { minLength: 1 }), { nil: null }),
      markets: fc.option(fc.subarray(MARKETS, { minLength: 1 }), { nil: null }),
      view: fc.constantFrom(...VIEWS),
    });
    fc.assert(
      fc.property(fc.array(bookSubArb, { maxLength: 30 }), fc.integer({ min: 0, max: 10 }), (subs, removeN) => {
        // As parsed: a view only with orderbook.delta, each connection its own spec object.
        const subsOf = subs.map((s) => indexedSub(s.kinds, s.markets, { book: s.kinds?.includes('orderbook.delta') ? bookViewSpec(...s.view) : null }));
        expectRecipientsMatch(subsOf, removeN, frames);
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Indexes a client per subscription, removes the first `removeN`, then checks that every frame
 * reaches exactly the remaining clients whose filters match it, each once.
 */
function expectRecipientsMatch(subs: Subscription[], removeN: number, frames: readonly Frame[]): void {
  const index = new SubscriberIndex();
  const clients = subs.map((sub) => {
    const c = new StreamClient({} as never, sub, 1024);
    index.add(c);
    return c;
  });
  const removed = clients.slice(0, removeN);
  for (const c of removed) index.remove(c);
  const live = clients.filter((c) => !removed.includes(c));
  expect(index.size).toBe(live.length);
  for (const f of frames) {
    const got: StreamClient[] = [];
    index.forEachRecipient(f, (c) => got.push(c));
    expect(new Set(got).size).toBe(got.length);
    expect(new Set(got)).toEqual(new Set(live.filter((c) => matches(c.sub, f))));
  }
}

/** A subscription as parsed from `kinds` and `markets` (null: no filter), the rest as given or empty. */
function indexedSub(kinds: string[] | null, markets: string[] | null, rest: Partial<Subscription>): Subscription {
  return {
    kinds: kinds ? new Set(kinds) : null,
    markets: markets ? new Set(markets) : null,
    requestedMarkets: markets,
    marketsIgnored: false,
    intervals: null,
    parties: new Set(),
    since: null,
    control: false,
    epoch: null,
    heartbeatS: null,
    snapshot: true,
    proof: null,
    book: null,
    ...rest,
  };
}
