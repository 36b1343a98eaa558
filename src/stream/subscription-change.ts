// What a subscribe / unsubscribe message does to a connection's filters (docs/stream.md "Talking to
// the socket"). The URL's filters are where a connection starts; messages change them from there:
//
// - Each list (kinds, markets, intervals, parties) is either "every" (the URL did not name it and
//   no message has) or a list. `subscribe` adds its values to a list; on "every" the list becomes
//   the values named: a connection receives what it subscribed to (subscribing to BTC-PERP on a
//   connection opened without `markets` means BTC-PERP, not every market and BTC-PERP as well).
//   An empty list names nothing and changes nothing (a subscribe never removes).
// - `unsubscribe` removes values from a list. Kinds and intervals that are "every" are first made
//   the explicit list of every spec kind / every interval; markets that are "every" cannot be
//   narrowed by removing one (the engine may list more later): that is refused, name the markets
//   to keep with `subscribe` instead. A list emptied this way matches nothing of its dimension.
// - A market the engine does not list is refused (`unknown_market`), never ignored as rule 1
//   ignores the URL's: a subscribe cannot silently turn into every market.
// - `orderbook.delta` with `depth` / `group` sets the connection's book view (one per connection);
//   unsubscribing `orderbook.delta` returns the connection to the spec's polled snapshots. The
//   view's `orderbook.snapshot` stays while `orderbook.delta` does: an unsubscribe cannot remove it alone.
// Pure: answers the new Subscription; the hub swaps it in (and out of its index) in one step.
import { FRAME_KINDS, CANDLE_INTERVALS, type CandleInterval } from '../contracts/frame.js';
import { groupingKey } from '../projections/book-view.js';
import { bookViewSpec } from './book-subscription.js';
import { InvalidSubscriptionError } from './errors.js';
import type { SubscribeMessage, UnsubscribeMessage } from './client-messages.js';
import { judgeMarketsFilter, NO_PARTIES, OPT_IN_KINDS, type Subscription } from './subscription.js';

/** Most markets / parties / kinds a connection may hold at once (as the URL's lists). */
export const MAX_SUBSCRIBED = 100;

const SPEC_KINDS: readonly string[] = FRAME_KINDS.filter((k) => !OPT_IN_KINDS.has(k));

function union(current: ReadonlySet<string> | null, added: readonly string[] | null, name: string): Set<string> | null {
  // An empty list adds nothing: on "every" it must not become the empty list (a subscribe that drops every frame).
  if (added === null || added.length === 0) return current ? new Set(current) : null;
  const next = new Set(current ?? []);
  for (const v of added) next.add(v);
  if (next.size > MAX_SUBSCRIBED) throw new InvalidSubscriptionError(`the connection would hold more than ${MAX_SUBSCRIBED} ${name}`, 'too_many');
  return next;
}

function copy(sub: Subscription): Subscription {
  return { ...sub };
}

/**
 * The filters after a subscribe message. `knownMarkets` (null while the engine's list is not
 * known) judges the markets named; parties must have been proven by the caller.
 */
export function applySubscribe(sub: Subscription, message: SubscribeMessage, knownMarkets: ReadonlySet<string> | null): Subscription {
  const { lists } = message;
  if (lists.markets && knownMarkets) {
    const unknown = lists.markets.filter((m) => !knownMarkets.has(m));
    if (unknown.length > 0) {
      throw new InvalidSubscriptionError(`the engine lists no market ${unknown.map((m) => JSON.stringify(m)).join(', ')}`, 'unknown_market', { markets: unknown });
    }
  }
  const next = copy(sub);
  const kinds = union(sub.kinds, lists.kinds, 'kinds');
  const requested = union(sub.requestedMarkets ? new Set(sub.requestedMarkets) : null, lists.markets, 'markets');
  next.intervals = union(sub.intervals, lists.intervals, 'intervals') as Set<CandleInterval> | null;
  next.parties = union(sub.parties, lists.party, 'parties') ?? NO_PARTIES;

  const wantsDelta = kinds?.has('orderbook.delta') ?? false;
  if (!wantsDelta && (message.depth !== null || message.group !== null || message.throttle !== null)) {
    throw new InvalidSubscriptionError('"depth", "group" and "throttle" shape the order book deltas: subscribe to orderbook.delta');
  }
  if (wantsDelta) {
    // A new view when one is asked for, or when the connection had none; otherwise its view stays.
    if (message.depth !== null || message.group !== null || message.throttle !== null || sub.book === null) next.book = bookViewSpec(message.depth, message.group, message.throttle);
    kinds!.add('orderbook.snapshot'); // deltas mean nothing without their view's snapshots
  }
  next.kinds = kinds;
  setMarkets(next, requested, knownMarkets);
  return next;
}

/** The filters after an unsubscribe message. */
export function applyUnsubscribe(sub: Subscription, message: UnsubscribeMessage, knownMarkets: ReadonlySet<string> | null): Subscription {
  const { lists } = message;
  if (lists.markets && sub.requestedMarkets === null) {
    throw new InvalidSubscriptionError('the connection receives every market: subscribe to the markets to keep instead of unsubscribing one');
  }
  const next = copy(sub);
  const kinds = remove(sub.kinds ?? new Set(SPEC_KINDS), lists.kinds, sub.kinds);
  // A view's snapshots go with its deltas (ADR 0191): while the view stays, its orderbook.snapshot
  // stays too. Without it the seeded or rebuilt book never reached the connection, only deltas it
  // cannot apply (the LiveConnection removed the kind the subscribe had added: issue 32).
  if (kinds?.has('orderbook.delta')) kinds.add('orderbook.snapshot');
  next.kinds = kinds;
  next.intervals = remove(sub.intervals ?? new Set(CANDLE_INTERVALS), lists.intervals, sub.intervals) as Set<CandleInterval> | null;
  next.parties = remove(sub.parties, lists.party, sub.parties) ?? NO_PARTIES;
  if (lists.markets) setMarkets(next, new Set(sub.requestedMarkets!.filter((m) => !lists.markets!.includes(m))), knownMarkets);
  if (next.kinds && !next.kinds.has('orderbook.delta')) next.book = null;
  return next;
}

function remove<T extends string>(from: ReadonlySet<T>, removed: readonly string[] | null, unchanged: ReadonlySet<T> | null): Set<T> | null {
  if (removed === null) return unchanged ? new Set(unchanged) : null;
  const next = new Set(from);
  for (const v of removed) next.delete(v as T);
  return next;
}

/** Markets from messages are never ignored by rule 1 (they were checked when named): judged only against a later market list. */
function setMarkets(sub: Subscription, requested: ReadonlySet<string> | null, knownMarkets: ReadonlySet<string> | null): void {
  sub.requestedMarkets = requested ? [...requested] : null;
  sub.marketsIgnored = false;
  sub.markets = requested ? new Set(requested) : null;
  judgeMarketsFilter(sub, knownMarkets);
}

/** The filters as applied, as the ack and stream.subscribed carry them. */
export function appliedFilters(sub: Subscription): Record<string, unknown> {
  return {
    kinds: sub.kinds ? [...sub.kinds] : null,
    markets: sub.markets ? [...sub.markets] : null,
    marketsIgnored: sub.marketsIgnored,
    intervals: sub.intervals ? [...sub.intervals] : null,
    parties: [...sub.parties],
    book: sub.book ? { depth: sub.book.depth, group: groupingKey(sub.book.grouping), ...(sub.book.throttleMs ? { throttle: sub.book.throttleMs } : {}) } : null,
  };
}
