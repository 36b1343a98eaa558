// Query parameters of /v1/stream (docs/stream.md): `kinds`, `party`, `markets`, `intervals`, each a comma
// list or repeated; plus `since` (replay, gateway extension) with its `epoch`, `control` (opt-in for
// the gateway's control messages), `heartbeat` (seconds between stream.heartbeat frames),
// `snapshot` (state on subscribe, default true) and the party proof `user`, `sessionId`, `sig`
// (docs/stream.md "Filters"). Anything malformed is a 400 before the upgrade.
import { InvalidSubscriptionError } from './errors.js';
import { MARKET_PATTERN, PARTY_PATTERN } from '../contracts/wire.js';
import { CANDLE_INTERVALS, FRAME_KINDS, frameParty, type CandleInterval, type Frame } from '../contracts/frame.js';
import { BOOK_QUERY_PARAMETERS, parseBookView } from './book-subscription.js';
import { bookViewOf, viewKey, type BookViewSpec } from './book-views.js';
import { OPT_IN_KINDS } from './frame-kinds.js';

export interface Subscription {
  /** null: every kind. */
  kinds: ReadonlySet<string> | null;
  /** The markets asked for, as given (null: none asked). */
  requestedMarkets: readonly string[] | null;
  /**
   * The market filter in effect: null for every market (none asked, or rule 1 applied). Re-judged
   * (with `marketsIgnored`) whenever the engine's market list is loaded or changes: see judgeMarketsFilter.
   */
  markets: ReadonlySet<string> | null;
  /** true when rule 1 dropped the markets filter. */
  marketsIgnored: boolean;
  /** null: every interval. Narrows candle.* only. */
  intervals: ReadonlySet<CandleInterval> | null;
  /** Parties whose user-scoped frames this connection receives (opt-in). */
  parties: ReadonlySet<string>;
  since: number | null;
  /**
   * The connection receives the gateway's control messages (`stream.subscribed`, `stream.gap`),
   * which are not spec kinds: only when it asked for them with `control=true`, or for the
   * replay extension with `since`. A client that follows the spec alone receives only spec kinds.
   */
  control: boolean;
  /** The history `since` belongs to (from a previous stream.subscribed); null when not given. */
  epoch: string | null;
  /** Seconds between stream.heartbeat frames (1..300); null: none. */
  heartbeatS: number | null;
  /** `compress=deflate`: permessage-deflate asked for (negotiated when the client offers it too). */
  compress?: boolean;
  /** false: no snapshot frames on subscribe. */
  snapshot: boolean;
  proof: { user: string; sessionId: string; sig: string } | null;
  /**
   * The order book view of a connection that asked for `orderbook.delta` (docs/stream.md "Order
   * book deltas"): its book frames are made from the events; null: the spec's polled snapshots.
   */
  book: BookViewSpec | null;
}

/**
 * Every query parameter /v1/stream knows; any other is refused (400 naming it), as on the REST
 * routes: a misspelt filter (`market=`) would otherwise silently stream everything.
 * `epoch`, `heartbeat` and `snapshot` belong to the resume/heartbeat/snapshot protocol.
 */
export const STREAM_QUERY_PARAMETERS: readonly string[] = [
  'kinds',
  'markets',
  'intervals',
  'party',
  'since',
  'control',
  'user',
  'sessionId',
  'sig',
  'epoch',
  'heartbeat',
  'snapshot',
  'compress',
  ...BOOK_QUERY_PARAMETERS,
];
const KNOWN_PARAMETERS: ReadonlySet<string> = new Set(STREAM_QUERY_PARAMETERS);

const MAX_LIST = 100;
export const MAX_HEARTBEAT_S = 300;
/** An epoch as the gateway makes them (src/stream/epoch.ts), with room to spare. */
const EPOCH = /^[A-Za-z0-9_-]{1,64}$/;
const KINDS: ReadonlySet<string> = new Set(FRAME_KINDS);
const INTERVALS: ReadonlySet<string> = new Set(CANDLE_INTERVALS);
const PARTY = new RegExp(PARTY_PATTERN);
const MARKET = new RegExp(MARKET_PATTERN);

/**
 * Filters are read-only (ReadonlySet: a change makes new sets), and most connections ask the same
 * kinds, markets and intervals: one Set per distinct list (in its order) for all of them, instead
 * of one per connection (a Set costs some 250 bytes; at 20 000 connections, megabytes). Bounded:
 * past SHARED_SETS_MAX distinct lists, new ones are made per connection again.
 */
const sharedSets = new Map<string, ReadonlySet<string>>();
const SHARED_SETS_MAX = 1_000;
/** The parties of a connection that asked for none (parties are per user: not worth sharing otherwise). */
export const NO_PARTIES: ReadonlySet<string> = new Set();

export function sharedSet<T extends string>(items: readonly T[]): ReadonlySet<T> {
  const key = items.join('\u0000');
  let set = sharedSets.get(key);
  if (!set) {
    set = new Set(items);
    if (sharedSets.size < SHARED_SETS_MAX) sharedSets.set(key, set);
  }
  return set as ReadonlySet<T>;
}

function listParam(query: URLSearchParams, name: string): string[] | null {
  const raw = query.getAll(name);
  if (raw.length === 0) return null;
  const items = raw.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (items.length > MAX_LIST) throw new InvalidSubscriptionError(`query parameter "${name}" lists more than ${MAX_LIST} values`);
  return [...new Set(items)];
}

function singleParam(query: URLSearchParams, name: string): string | null {
  const raw = query.getAll(name);
  if (raw.length === 0) return null;
  if (raw.length > 1) throw new InvalidSubscriptionError(`query parameter "${name}" must be given once`);
  return raw[0]!;
}

function checkEach(name: string, values: string[] | null, ok: (v: string) => boolean, what: string): void {
  for (const v of values ?? []) {
    if (!ok(v)) throw new InvalidSubscriptionError(`query parameter "${name}": ${JSON.stringify(v.slice(0, 120))} is not ${what}`);
  }
}

/**
 * Parses and validates the query. `knownMarkets` (the engine's markets, null when not known yet)
 * decides rule 1: a markets filter none of whose markets the engine knows matches nothing, and is
 * then ignored so the client receives every market.
 */
export function parseSubscription(query: URLSearchParams, knownMarkets: ReadonlySet<string> | null): Subscription {
  for (const name of query.keys()) {
    if (!KNOWN_PARAMETERS.has(name)) {
      throw new InvalidSubscriptionError(`unknown query parameter "${name.slice(0, 64)}" (allowed: ${STREAM_QUERY_PARAMETERS.join(', ')})`);
    }
  }
  const kinds = listParam(query, 'kinds');
  checkEach('kinds', kinds, (k) => KINDS.has(k), `a frame kind (one of ${FRAME_KINDS.join(', ')})`);
  const intervals = listParam(query, 'intervals');
  checkEach('intervals', intervals, (i) => INTERVALS.has(i), `an interval (one of ${CANDLE_INTERVALS.join(', ')})`);
  // `markets=` with no value names nothing: not a filter (an empty list from a message matches no market).
  const listed = listParam(query, 'markets');
  const markets = listed && listed.length > 0 ? listed : null;
  checkEach('markets', markets, (m) => MARKET.test(m), 'a market symbol');
  const parties = listParam(query, 'party') ?? [];
  checkEach('party', parties, (p) => p.length <= 114 && PARTY.test(p), 'a party id <hint>::<64 hex>');

  const sinceText = singleParam(query, 'since');
  let since: number | null = null;
  if (sinceText !== null) {
    if (!/^\d{1,16}$/.test(sinceText) || !Number.isSafeInteger(Number(sinceText))) {
      throw new InvalidSubscriptionError('query parameter "since" must be a non-negative integer seq');
    }
    since = Number(sinceText);
  }

  const controlText = singleParam(query, 'control');
  if (controlText !== null && controlText !== 'true' && controlText !== 'false') {
    throw new InvalidSubscriptionError('query parameter "control" must be true or false');
  }

  const epoch = singleParam(query, 'epoch');
  if (epoch !== null && !EPOCH.test(epoch)) {
    throw new InvalidSubscriptionError('query parameter "epoch" must be an epoch from stream.subscribed (1..64 of A-Z a-z 0-9 _ -)');
  }

  const heartbeatText = singleParam(query, 'heartbeat');
  let heartbeatS: number | null = null;
  if (heartbeatText !== null) {
    if (!/^\d{1,3}$/.test(heartbeatText) || Number(heartbeatText) < 1 || Number(heartbeatText) > MAX_HEARTBEAT_S) {
      throw new InvalidSubscriptionError(`query parameter "heartbeat" must be an integer number of seconds from 1 to ${MAX_HEARTBEAT_S}`);
    }
    heartbeatS = Number(heartbeatText);
  }

  const compressText = singleParam(query, 'compress');
  if (compressText !== null && compressText !== 'deflate' && compressText !== 'none') {
    throw new InvalidSubscriptionError('query parameter "compress" must be deflate or none');
  }

  const snapshotText = singleParam(query, 'snapshot');
  if (snapshotText !== null && snapshotText !== 'true' && snapshotText !== 'false') {
    throw new InvalidSubscriptionError('query parameter "snapshot" must be true or false');
  }

  const user = singleParam(query, 'user');
  const sessionId = singleParam(query, 'sessionId');
  const sig = singleParam(query, 'sig');
  const given = [user, sessionId, sig].filter((v) => v !== null).length;
  if (given !== 0 && given !== 3) {
    throw new InvalidSubscriptionError('party proof needs all of "user", "sessionId" and "sig" in the query');
  }

  const book = parseBookView(query, kinds);
  // A delta connection takes its view's orderbook.snapshot frames too: deltas mean nothing without them.
  if (book && kinds && !kinds.includes('orderbook.snapshot')) kinds.push('orderbook.snapshot');

  const sub: Subscription = {
    book,
    kinds: kinds ? sharedSet(kinds) : null,
    requestedMarkets: markets,
    markets: markets ? sharedSet(markets) : null,
    marketsIgnored: false,
    intervals: intervals ? sharedSet(intervals as CandleInterval[]) : null,
    parties: parties.length === 0 ? NO_PARTIES : new Set(parties),
    since,
    control: since !== null || controlText === 'true',
    epoch,
    heartbeatS,
    compress: compressText === 'deflate',
    snapshot: snapshotText !== 'false',
    proof: given === 3 ? { user: user!, sessionId: sessionId!, sig: sig! } : null,
  };
  judgeMarketsFilter(sub, knownMarkets);
  return sub;
}

/** Rule 1's verdict alone: true when the markets asked for are to be ignored. */
export function marketsFilterMatchesNothing(asked: readonly string[] | null, knownMarkets: ReadonlySet<string> | null): boolean {
  return asked !== null && asked.length > 0 && knownMarkets !== null && !asked.some((m) => knownMarkets.has(m));
}

/**
 * Rule 1 (docs/stream.md): a markets filter none of whose markets the engine lists matches nothing, and
 * is ignored (every market is sent). While the list is not known (null) the filter is kept as
 * asked. Sets `markets`/`marketsIgnored` for `knownMarkets`; true when they changed. A client
 * registered in the hub's index must be taken out of it before, and put back after, a change.
 */
export function judgeMarketsFilter(sub: Subscription, knownMarkets: ReadonlySet<string> | null): boolean {
  const asked = sub.requestedMarkets;
  const ignored = marketsFilterMatchesNothing(asked, knownMarkets);
  if (ignored === sub.marketsIgnored) return false;
  sub.marketsIgnored = ignored;
  sub.markets = asked && !ignored ? sharedSet(asked) : null;
  return true;
}

/**
 * Gateway extensions a connection receives only when its `kinds` names them, so a client that
 * follows the spec alone sees spec kinds only (docs/stream.md).
 */
export { OPT_IN_KINDS };

/** The kinds filter alone: a connection without one takes every kind but the opt-in ones. */
export function wantsKind(sub: Subscription, kind: string): boolean {
  return sub.kinds ? sub.kinds.has(kind) : !OPT_IN_KINDS.has(kind);
}

/** The whole filter: does this connection receive this frame? (The hub's index narrows first.) */
export function matches(sub: Subscription, frame: Frame): boolean {
  if (!wantsKind(sub, frame.kind)) return false;
  const party = frameParty(frame);
  if (party !== undefined && !sub.parties.has(party)) return false;
  if (sub.markets && frame.market !== undefined && !sub.markets.has(frame.market)) return false;
  if (sub.intervals && frame.interval !== undefined && !sub.intervals.has(frame.interval)) return false;
  if (frame.kind === 'orderbook.snapshot' || frame.kind === 'orderbook.delta') return bookFrameMatches(sub, frame);
  if (frame.kind === 'engine.order_filled' && sub.parties.size > 0) return fillConcerns(frame, sub.parties);
  return true;
}

/**
 * A connection with a `party` filter asked for its parties' frames: of the engine's (public)
 * fill events it gets only those with a leg of one of its parties, forwarded unchanged
 * (docs/stream.md "User channels": before, it got every match of every party). Its own legs
 * alone come as `fill` frames.
 */
function fillConcerns(frame: Frame, parties: ReadonlySet<string>): boolean {
  const legs = frame.payload.legs;
  if (!Array.isArray(legs)) return false;
  return legs.some((l) => typeof l === 'object' && l !== null && parties.has((l as { party?: unknown }).party as string));
}

/**
 * Book frames: the polled (spec) snapshots go to connections without a view, the frames made for a
 * view to the connections with that view only.
 */
function bookFrameMatches(sub: Subscription, frame: Frame): boolean {
  const view = bookViewOf(frame);
  if (view === undefined) return sub.book === null && frame.kind === 'orderbook.snapshot';
  return sub.book !== null && frame.market !== undefined && viewKey(frame.market, sub.book) === view;
}
