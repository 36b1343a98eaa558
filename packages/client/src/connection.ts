// One WebSocket for everything a screen follows (the spec's "one connection per client";
// docs/client.md "One connection"): books, public market data and party channels are *watches* on
// one StreamClient, whose filters are kept equal to the union of what the open watches ask for with
// `subscribe` / `unsubscribe` on the open socket (docs/stream.md "Talking to the socket").
//
// The gateway's filters are one list per dimension (kinds × markets × intervals × parties), not a
// list of (kind, market) pairs, so the union lets through more than each watch asked for (a book of
// BTC-PERP and the trades of ETH-PERP also bring ETH's book and BTC's trades): every frame is
// handed only to the watches it matches, here. A watch that names no market (a party's channels,
// whose positions may be in any market) makes the connection follow every market the engine lists
// (docs/adr/0140-one-connection-per-client.md).
//
// Changes run one after the other (a chain of promises), each computed from the watches as they
// stand when it runs, so a burst of watch/close (switching market, grouping) ends in the filters of
// the last state, with at most one subscribe and one unsubscribe per change.
import { StreamClient, type AppliedFilters, type StreamMessage, type StreamOptions, type StreamState } from './stream.js';
import type { FrameKind, Interval } from './engine-events.js';
import type { GatewayClient } from './client.js';
import type { GatewayError } from './errors.js';
import type { ResetMessage } from './types.js';

/** What one watch follows. `markets` absent: every market (as for a party's channels). */
export interface Interest {
  kinds: readonly FrameKind[];
  markets?: readonly string[];
  intervals?: readonly Interval[];
  party?: readonly string[];
  /** With `orderbook.delta`: the connection's book view (one per connection: the last watch asking wins). */
  book?: { depth?: number; group?: string };
}

export interface WatchHandlers {
  /** Frames (snapshot and live) and backfilled events this watch matches, and every control message. */
  onMessage: (message: StreamMessage) => void;
  /** Another engine history: drop what was built from frames (see StreamOptions.onReset). */
  onReset?: (reset: ResetMessage['payload'] | null) => void;
  /** A subscribe for this watch was refused (an unknown market, a party the session does not prove). */
  onError?: (error: unknown) => void;
}

export interface Watch {
  /** Stops delivering to this watch and drops from the connection what no other watch needs. */
  close(): void;
  /** Resolves once the connection's filters include this watch (after the subscribe's ack). */
  readonly ready: Promise<void>;
}

export interface LiveConnectionOptions {
  client: GatewayClient;
  WebSocket?: StreamOptions['WebSocket'];
  heartbeatS?: number;
  reconnect?: StreamOptions['reconnect'];
  onState?: (state: StreamState) => void;
  /** Transient trouble (see StreamOptions.onError) and refused changes. */
  onError?: (error: unknown) => void;
  onRefused?: (error: GatewayError) => void;
}

interface Entry {
  interest: Interest;
  handlers: WatchHandlers;
  /** A book watch whose first snapshot has been asked for (by the subscribe that added it, or a refresh). */
  bookAsked?: boolean;
}

interface Wanted {
  kinds: Set<string>;
  /** null: no market-bound kind is watched. */
  markets: Set<string> | null;
  intervals: Set<string>;
  party: Set<string>;
  book: { depth?: number; group?: string } | null;
}

const USER_KINDS = new Set(['position.update', 'balance.update', 'account.update', 'order.update', 'fill']);
const CANDLE_KINDS = new Set(['candle.update', 'candle.close']);

/** A book view as the gateway applies it (depth 20 and no grouping by default), comparable as text. */
const viewKey = (view: { depth?: number; group?: string } | null | undefined): string => `${view?.depth ?? 20}|${view?.group ?? 'none'}`;

const diff = (a: Iterable<string>, b: ReadonlySet<string> | null): string[] => [...a].filter((x) => !b?.has(x));

export class LiveConnection {
  private stream: StreamClient | null = null;
  private readonly entries = new Set<Entry>();
  /** The filters as the gateway last applied them (null dimensions: every). */
  private applied: { kinds: Set<string> | null; markets: Set<string> | null; intervals: Set<string> | null; party: Set<string>; book: string | null } | null = null;
  /**
   * The book view last asked for, as this client writes it (viewKey of a subscribe's or the URL's
   * view): the gateway's ack gives it in its own normal form (`tick:1` comes back
   * `tick:1.0000000000`), so whether the watches want another view is judged against what was asked.
   */
  private askedView: string | null = null;
  private chain: Promise<void> = Promise.resolve();
  private listed: string[] | null = null;
  private state: StreamState = 'stopped';
  private stopped = false;
  /** Sockets this connection opened (one, plus one per reconnect). */
  sockets = 0;

  constructor(private readonly options: LiveConnectionOptions) {}

  /** The connection's state (`connecting`, `live`, …; `stopped` before the first watch). */
  get streamState(): StreamState {
    return this.state;
  }

  /**
   * The StreamClient under the watches, for orders over the socket (`placeOrder`, `cancelOrder`,
   * `sender`); null until the first watch opened it.
   */
  get client(): StreamClient | null {
    return this.stream;
  }

  /** Resolves when every change asked so far (watches opened or closed, refreshes) has been applied. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** The connection's filters as the gateway last applied them (null: every), for probes and tests. */
  get filters(): { kinds: string[] | null; markets: string[] | null; intervals: string[] | null; party: string[]; book: string | null } | null {
    const a = this.applied;
    if (!a) return null;
    const list = (s: Set<string> | null) => (s ? [...s].sort() : null);
    return { kinds: list(a.kinds), markets: list(a.markets), intervals: list(a.intervals), party: [...a.party].sort(), book: a.book };
  }

  /** Follows `interest`; the socket opens with the first watch. */
  watch(interest: Interest, handlers: WatchHandlers): Watch {
    const entry: Entry = { interest, handlers };
    this.entries.add(entry);
    const ready = this.sync(entry);
    return {
      close: () => {
        if (!this.entries.delete(entry)) return;
        void this.sync(null);
      },
      ready,
    };
  }

  /**
   * A fresh snapshot of the connection's books (a keeper that lost the chain or the checksum):
   * the book kinds are dropped and asked again with the view, which sends every watched book's
   * snapshot before its next delta. Over one socket, without a reconnect.
   */
  refreshBooks(): Promise<void> {
    return this.enqueue(() => this.askBooksAgain(this.wanted()));
  }

  private async askBooksAgain(want: Wanted): Promise<void> {
    const stream = this.stream;
    if (!stream || !this.applied?.kinds?.has('orderbook.delta')) return;
    this.take(await stream.unsubscribe({ kinds: ['orderbook.delta', 'orderbook.snapshot'] }));
    if (!want.kinds.has('orderbook.delta')) return;
    this.askedView = viewKey(want.book);
    this.take(await stream.subscribe({ kinds: ['orderbook.delta'], ...(want.book ? { book: want.book } : {}) }));
  }

  /** Closes the socket; watches stay registered and are asked again by the next watch or start(). */
  stop(): void {
    this.stopped = true;
    this.stream?.stop();
    this.stream = null;
    this.applied = null;
  }

  /** Opens the socket again after stop() with the open watches. */
  start(): void {
    this.stopped = false;
    void this.sync(null);
  }

  // ---- the union of the watches and the changes that make the connection's filters equal to it ----

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.chain.then(step);
    this.chain = run.catch(() => {});
    return run;
  }

  private sync(entry: Entry | null): Promise<void> {
    const run = this.enqueue(() => this.step());
    return run.catch((err: unknown) => {
      if (entry) entry.handlers.onError?.(err);
      this.options.onError?.(err);
    });
  }

  private wanted(): Wanted {
    const w: Wanted = { kinds: new Set(), markets: null, intervals: new Set(), party: new Set(), book: null };
    let everyMarket = false;
    for (const { interest } of this.entries) {
      for (const k of interest.kinds) w.kinds.add(k);
      for (const p of interest.party ?? []) w.party.add(p);
      for (const i of interest.intervals ?? []) w.intervals.add(i);
      if (interest.markets) {
        w.markets ??= new Set();
        for (const m of interest.markets) w.markets.add(m);
      } else everyMarket = true;
      if (interest.book && interest.kinds.includes('orderbook.delta')) w.book = interest.book;
    }
    // The gateway adds a view's orderbook.snapshot to orderbook.delta (its acks list both): wanted
    // too, so the diff with the applied filters never removes it. Removed, the seeded or rebuilt
    // book's snapshot never came and the watch ignored every delta (issue 32, ADR 0191).
    if (w.kinds.has('orderbook.delta')) w.kinds.add('orderbook.snapshot');
    if (everyMarket) w.markets = new Set([...(w.markets ?? []), ...(this.listed ?? [])]);
    return w;
  }

  private async step(): Promise<void> {
    if (this.stopped) return;
    if (this.listed === null && [...this.entries].some((e) => !e.interest.markets)) {
      this.listed = (await this.options.client.listMarkets()).items.map((m) => m.symbol);
    }
    const want = this.wanted();
    if (want.kinds.size === 0) return; // nothing watched: the connection keeps what it has, or never opens
    const newBooks = [...this.entries].filter((e) => !e.bookAsked && e.interest.kinds.includes('orderbook.delta'));
    for (const e of newBooks) e.bookAsked = true;
    if (!this.stream) return this.open(want);
    const applied = this.applied!;
    const add = {
      kinds: diff(want.kinds, applied.kinds),
      markets: diff(want.markets ?? [], applied.markets),
      intervals: want.intervals.size > 0 && applied.intervals !== null ? diff(want.intervals, applied.intervals) : [],
      party: diff(want.party, applied.party),
    };
    const bookChanged = want.kinds.has('orderbook.delta') && (applied.book === null || viewKey(want.book) !== this.askedView);
    if (bookChanged && !add.kinds.includes('orderbook.delta')) add.kinds.push('orderbook.delta');
    const viewBefore = applied.book;
    if (add.kinds.length + add.markets.length + add.intervals.length + add.party.length > 0) {
      if (bookChanged) this.askedView = viewKey(want.book);
      this.take(
        await this.stream.subscribe({
          ...(add.kinds.length ? { kinds: add.kinds as FrameKind[] } : {}),
          ...(add.markets.length ? { markets: add.markets as [string, ...string[]] } : {}),
          ...(add.intervals.length ? { intervals: add.intervals as Interval[] } : {}),
          ...(add.party.length ? { party: add.party } : {}),
          ...(bookChanged && want.book ? { book: want.book } : {}),
        }),
      );
    }
    // The gateway sends a book's snapshot on a subscribe only for what it adds: a view the connection
    // did not have, or a market it did not follow. A book watch for a market whose view the
    // connection already receives (another book before it, the same view asked again, every market
    // for a party's watch) gets none from that subscribe: ask the books again.
    const viewNow = this.applied!.book;
    const newView = bookChanged && viewNow !== null && viewNow !== viewBefore;
    const covered = (e: Entry) => newView || (e.interest.markets ?? []).every((m) => add.markets.includes(m));
    if (newBooks.some((e) => !covered(e))) await this.askBooksAgain(want);
    const now = this.applied!;
    const remove = {
      kinds: now.kinds ? diff(now.kinds, want.kinds) : [],
      markets: now.markets && want.markets ? diff(now.markets, want.markets) : [],
      // Intervals matter only to candle kinds: kept while none is watched (nothing to drop).
      intervals: now.intervals && want.intervals.size > 0 ? diff(now.intervals, want.intervals) : [],
      party: diff(now.party, want.party),
    };
    if (remove.kinds.length + remove.markets.length + remove.intervals.length + remove.party.length > 0) {
      this.take(
        await this.stream.unsubscribe({
          ...(remove.kinds.length ? { kinds: remove.kinds as FrameKind[] } : {}),
          ...(remove.markets.length ? { markets: remove.markets } : {}),
          ...(remove.intervals.length ? { intervals: remove.intervals as Interval[] } : {}),
          ...(remove.party.length ? { party: remove.party } : {}),
        }),
      );
    }
  }

  private take(p: AppliedFilters): void {
    this.applied = {
      kinds: p.kinds === null ? null : new Set(p.kinds),
      markets: p.markets === null ? null : new Set(p.markets),
      intervals: p.intervals === null ? null : new Set(p.intervals),
      party: new Set(p.parties),
      book: p.book ? viewKey(p.book) : null,
    };
  }

  /** The first socket: its URL carries the union, so its first frames are already the right ones. */
  private open(want: Wanted): void {
    const { client, WebSocket, heartbeatS, reconnect, onError, onRefused } = this.options;
    const Ctor = WebSocket ?? (globalThis as { WebSocket?: StreamOptions['WebSocket'] }).WebSocket;
    const count = (): void => {
      this.sockets++;
    };
    const Counting = Ctor
      ? (function (this: unknown, url: string) {
          count();
          return new Ctor(url);
        } as unknown as NonNullable<StreamOptions['WebSocket']>)
      : undefined;
    const stream: StreamClient = new StreamClient({
      client,
      kinds: [...want.kinds] as FrameKind[],
      ...(want.markets && want.markets.size > 0 ? { markets: [...want.markets] as [string, ...string[]] } : {}),
      ...(want.intervals.size > 0 ? { intervals: [...want.intervals] as Interval[] } : {}),
      ...(want.party.size > 0 ? { party: [...want.party] } : {}),
      ...(want.book ? { book: want.book } : {}),
      ...(heartbeatS !== undefined ? { heartbeatS } : {}),
      ...(reconnect ? { reconnect } : {}),
      ...(Counting ? { WebSocket: Counting } : {}),
      onMessage: (m) => this.deliver(m),
      onState: (s) => {
        this.state = s;
        this.options.onState?.(s);
      },
      ...(onError ? { onError } : {}),
      ...(onRefused ? { onRefused } : {}),
      onReset: (r) => {
        for (const e of [...this.entries]) e.handlers.onReset?.(r);
      },
    });
    this.stream = stream;
    this.applied = {
      kinds: new Set(want.kinds),
      markets: want.markets && want.markets.size > 0 ? new Set(want.markets) : null,
      intervals: want.intervals.size > 0 ? new Set(want.intervals) : null,
      party: new Set(want.party),
      book: want.kinds.has('orderbook.delta') ? viewKey(want.book) : null,
    };
    this.askedView = this.applied.book;
    stream.start();
  }

  // ---- handing each frame to the watches it matches ----

  private deliver(message: StreamMessage): void {
    for (const entry of [...this.entries]) {
      if (this.entries.has(entry) && matches(entry.interest, message)) entry.handlers.onMessage(message);
    }
  }
}

function matches(interest: Interest, message: StreamMessage): boolean {
  if (message.source === 'control') return true;
  const item = (message.source === 'live' ? message.frame : message.event) as { kind: string; market?: string | null; userParty?: string; party?: string | null; interval?: string };
  const kinds = interest.kinds as readonly string[];
  if (message.source === 'backfill') {
    // A raw event stands for the frames derived from it: a fill for trades, positions, balances, candles.
    if (!kinds.includes(item.kind) && !(item.kind === 'engine.order_filled' && kinds.some((k) => k !== 'orderbook.delta'))) return false;
  } else if (!kinds.includes(item.kind) && !(item.kind === 'orderbook.snapshot' && kinds.includes('orderbook.delta'))) return false;
  if (interest.markets && typeof item.market === 'string' && !interest.markets.includes(item.market)) return false;
  const owner = item.userParty ?? (USER_KINDS.has(item.kind) ? item.party : undefined);
  if (typeof owner === 'string' && !(interest.party ?? []).includes(owner)) return false;
  if (message.source === 'live' && CANDLE_KINDS.has(item.kind) && interest.intervals && !interest.intervals.includes(item.interval as Interval)) return false;
  return true;
}
