// Book frames for the connections that asked for deltas (docs/stream.md "Order book deltas"). A
// view is one (market, depth, grouping): its frames are made once and sent to every connection
// with that view, through the hub like any frame (the view travels with the frame in a WeakMap,
// never on the wire).
//
//   orderbook.snapshot  the view whole (on subscribe, and when the book was rebuilt from the engine)
//   orderbook.delta     the levels of the view that changed with one engine event; size "0" = gone
//
// Both carry `bookSeq` (the seq of the last event that changed the market's book: the engine's
// own book seq, the same on every replica) and a CRC-32 `checksum` of the view's top 25 levels;
// a delta also carries `prevBookSeq`, the bookSeq of the view's previous frame. A client applies a
// delta only when its prevBookSeq is the bookSeq it holds, and resubscribes otherwise or when its
// checksum differs.
//
// A throttled view (`throttle` 100 or 500 ms) conflates: it sends at most one delta per period,
// the difference between the levels it last sent and the book now, with prevBookSeq the bookSeq it
// last sent and bookSeq and checksum those of the book now. So its chain is as exact as an
// unthrottled view's (each delta applies to exactly the state the previous frame left), with fewer
// and smaller frames when the book moves faster than the period. It lives only here, in the view
// layer: the books and their seeding are untouched.
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';
import { checksum, diffSide, groupingKey, viewLevels, type Grouping, type ViewLevels } from '../projections/book-view.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import type { BookKeeper } from './book-keeper.js';

export interface BookViewSpec {
  depth: number;
  grouping: Grouping;
  /** Conflation period of the deltas, ms (0: a delta per delivered batch of events). */
  throttleMs?: number;
}

/** The throttle periods a view may ask for (ms). */
export const BOOK_THROTTLES = [100, 500] as const;

interface View {
  key: string;
  /** viewSpecKey(spec). */
  specKey: string;
  market: string;
  spec: BookViewSpec;
  levels: ViewLevels;
  bookSeq: number;
  /** false until the market's book is seeded: nothing is sent for it before. */
  ready: boolean;
  /** Throttled views: when the last delta was sent (ms), and the last event that changed the book since. */
  sentAt?: number;
  pending?: EngineEvent | null;
}

/** The view a book frame was made for (its key, and the depth|grouping part of it). */
const viewOfFrame = new WeakMap<Frame, Pick<View, 'key' | 'specKey'>>();

/** The view a book frame was made for; undefined for the polled (spec) orderbook.snapshot frames. */
export function bookViewOf(frame: Frame): string | undefined {
  return viewOfFrame.get(frame)?.key;
}

/** The depth|grouping part of the view a book frame was made for (see viewSpecKey); undefined for the polled snapshots. */
export function bookViewSpecOf(frame: Frame): string | undefined {
  return viewOfFrame.get(frame)?.specKey;
}

/** The depth|grouping part of a view's key, made once per spec (the filter asks for it per frame and connection). */
const specKeys = new WeakMap<BookViewSpec, string>();

/**
 * The depth|grouping part of a view's key: two connections with equal specs get the same string,
 * so the hub's index buckets connections by it (src/stream/registry.ts).
 */
export function viewSpecKey(spec: BookViewSpec): string {
  let suffix = specKeys.get(spec);
  if (suffix === undefined) specKeys.set(spec, (suffix = `|${spec.depth}|${groupingKey(spec.grouping)}${spec.throttleMs ? `|t${spec.throttleMs}` : ''}`));
  return suffix;
}

export function viewKey(market: string, spec: BookViewSpec): string {
  return market + viewSpecKey(spec);
}

export interface BookViewsOptions {
  keeper: () => BookKeeper;
  /** Publishes a frame through the hub; returns the number of connections it reached. */
  publish(frame: Frame): number;
  /** The throttle's time and timer, and the frames' `ts` (default systemClock). */
  clock?: Clock;
}

/** How often throttled views are looked at (ms): a tenth of the shortest period's lateness at most. */
const THROTTLE_TICK_MS = 20;

export class BookViews {
  private readonly views = new Map<string, Map<string, View>>();
  /** Throttled views with a change not yet sent. */
  private readonly throttled = new Set<View>();
  private timer: ClockTimer | null = null;
  private readonly clock: Clock;

  constructor(private readonly options: BookViewsOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Snapshot frames of the views of one connection (creating the views it needs), for admitted markets. */
  snapshotFrames(markets: Iterable<string>, spec: BookViewSpec): Frame[] {
    const frames: Frame[] = [];
    for (const market of markets) {
      const view = this.view(market, spec);
      if (view.ready) frames.push(this.snapshotFrame(view));
    }
    return frames;
  }

  /** The markets whose books exist or are being seeded (for a connection without a markets filter). */
  markets(): string[] {
    return this.options.keeper().tracked();
  }

  private view(market: string, spec: BookViewSpec): View {
    const specKey = viewSpecKey(spec);
    const key = market + specKey;
    let byKey = this.views.get(market);
    let view = byKey?.get(key);
    if (view) return view;
    const book = this.options.keeper().book(market);
    view = book
      ? { key, specKey, market, spec, levels: viewLevels(book, spec.depth, spec.grouping), bookSeq: book.seq, ready: true }
      : { key, specKey, market, spec, levels: { bids: [], asks: [] }, bookSeq: 0, ready: false };
    if (!byKey) this.views.set(market, (byKey = new Map()));
    byKey.set(key, view);
    return view;
  }

  /** Markets changed since the last flush, with the last event that changed each. */
  private readonly dirty = new Map<string, EngineEvent>();

  /**
   * The book of `market` changed with `event`. Deltas are made at `flush`: once per delivered batch
   * of events (one engine request's events arrive together, and under load several requests' do:
   * the states between them are then never sent), so a taker sweeping five levels is one
   * delta, a client never sees a state inside one engine request, and a busy stream sends fewer,
   * larger frames instead of falling behind.
   */
  changed(market: string, event: EngineEvent): void {
    this.dirty.set(market, event);
  }

  /** One delta per view whose levels changed since the last flush. */
  flush(): void {
    if (this.dirty.size === 0) return;
    const dirty = [...this.dirty];
    this.dirty.clear();
    for (const [market, event] of dirty) this.publishDeltas(market, event);
  }

  private publishDeltas(market: string, event: EngineEvent): void {
    const byKey = this.views.get(market);
    const book = this.options.keeper().book(market);
    if (!byKey || !book) return;
    for (const view of [...byKey.values()]) {
      if (!view.ready) continue;
      if (view.spec.throttleMs) {
        view.pending = event;
        this.throttled.add(view);
        this.armThrottle();
        continue;
      }
      this.sendDelta(byKey, view, book, event);
    }
    if (byKey.size === 0) this.views.delete(market);
  }

  /** Looks at the throttled views every THROTTLE_TICK_MS while any waits (a timer re-armed on the clock, ADR 0240). */
  private armThrottle(): void {
    this.timer ??= this.clock
      .setTimeout(() => {
        this.timer = null;
        this.sendThrottled();
        if (this.throttled.size > 0) this.armThrottle();
      }, THROTTLE_TICK_MS)
      .unref();
  }

  /** Sends the throttled views whose period has passed since their last delta. */
  sendThrottled(): void {
    const now = this.clock.now();
    for (const view of [...this.throttled]) {
      if (now - (view.sentAt ?? 0) < view.spec.throttleMs!) continue;
      this.throttled.delete(view);
      const event = view.pending;
      view.pending = null;
      const byKey = this.views.get(view.market);
      const book = this.options.keeper().book(view.market);
      if (!event || !byKey || byKey.get(view.key) !== view || !book || !view.ready) continue;
      view.sentAt = now;
      this.sendDelta(byKey, view, book, event);
      if (byKey.size === 0) this.views.delete(view.market);
    }
    if (this.throttled.size === 0 && this.timer) {
      this.clock.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** The delta from the levels the view last sent to the book now; nothing when they are equal. */
  private sendDelta(byKey: Map<string, View>, view: View, book: NonNullable<ReturnType<BookKeeper['book']>>, event: EngineEvent): void {
    const next = viewLevels(book, view.spec.depth, view.spec.grouping);
    const bids = diffSide(view.levels.bids, next.bids);
    const asks = diffSide(view.levels.asks, next.asks);
    if (bids.length === 0 && asks.length === 0) return;
    const prevBookSeq = view.bookSeq;
    view.levels = next;
    view.bookSeq = book.seq;
    const frame: Frame = {
      kind: 'orderbook.delta',
      seq: event.seq,
      ts: event.ts,
      market: view.market,
      payload: {
        depth: view.spec.depth,
        grouping: groupingKey(view.spec.grouping),
        bookSeq: view.bookSeq,
        prevBookSeq,
        bids,
        asks,
        checksum: checksum(next),
      },
    };
    viewOfFrame.set(frame, view);
    // A view nobody receives any more (its connections closed) is dropped.
    if (this.options.publish(frame) === 0) byKey.delete(view.key);
  }

  /** The book of `market` was rebuilt (seeded or repaired): every view of it is sent whole. */
  rebuilt(market: string): void {
    this.dirty.delete(market);
    const byKey = this.views.get(market);
    const book = this.options.keeper().book(market);
    if (!byKey || !book) return;
    for (const view of [...byKey.values()]) {
      view.levels = viewLevels(book, view.spec.depth, view.spec.grouping);
      view.bookSeq = book.seq;
      view.ready = true;
      view.pending = null;
      this.throttled.delete(view);
      if (this.options.publish(this.snapshotFrame(view)) === 0) byKey.delete(view.key);
    }
    if (byKey.size === 0) this.views.delete(market);
  }

  /** The engine history was replaced: views are made again from the new books. */
  reset(): void {
    this.views.clear();
    this.dirty.clear();
    this.throttled.clear();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.throttled.clear();
  }

  private snapshotFrame(view: View): Frame {
    const frame: Frame = {
      kind: 'orderbook.snapshot',
      seq: view.bookSeq,
      ts: new Date(this.clock.now()).toISOString(),
      market: view.market,
      payload: {
        depth: view.spec.depth,
        grouping: groupingKey(view.spec.grouping),
        bookSeq: view.bookSeq,
        bids: view.levels.bids,
        asks: view.levels.asks,
        checksum: checksum(view.levels),
      },
    };
    viewOfFrame.set(frame, view);
    return frame;
  }
}
