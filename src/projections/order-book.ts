// One market's order book kept from the engine's event stream (docs/stream.md "Order book from
// events"): the resting orders and the price levels they make, with the seq of the last event that
// changed them (the same meaning as the engine's own book seq).
//
//   engine.order_placed     a limit order that is not IOC joins the book once it no longer crosses
//                           the other side: while it crosses it is the taker of the matches that
//                           follow (the engine matches it before resting its remainder), so the
//                           book is never shown crossed and equals the engine's after every request.
//   engine.order_filled     the maker (and a pending taker) lose the match size.
//   engine.order_cancelled  the order leaves the book (user, ioc, margin, reduce_only).
// Orders a trigger places arrive as ordinary engine.order_placed events after engine.trigger_fired.
//
// A book is seeded order by order (`seedOrders`: the mirror's resting orders at a known seq), so
// that every later event applies: a cancel names an order the book knows, with its price and size.
// Size the book holds without knowing its orders (a level taken from the engine's polled book, see
// `replaceLevels`: a repair, or a seed without a database) is "anonymous": fills against unknown
// makers consume it; it counts as one order in the level's order count; a cancel of an order
// behind it cannot be applied (that is why such a book is re-seeded order by order).
import { parseDecimal } from '../decimal.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { BookSeedOrder } from '../contracts/book-seed.js';

export type BookSide = 'buy' | 'sell';

interface RestingOrder {
  side: BookSide;
  price: bigint;
  remaining: bigint;
}

export interface Level {
  /** Total size (known orders + anonymous). */
  size: bigint;
  /** Number of known orders resting at this price. */
  orders: number;
  /** Size not attributed to a known order (seeded or repaired from the engine's aggregated book). */
  anonymous: bigint;
}

/** A price level as the views read it: price, size, order count. */
export interface LevelView {
  price: bigint;
  size: bigint;
  count: number;
}

class SideLevels {
  /** Best first: bids descending, asks ascending. */
  readonly prices: bigint[] = [];
  readonly levels = new Map<bigint, Level>();

  constructor(private readonly descending: boolean) {}

  best(): bigint | undefined {
    return this.prices[0];
  }

  get(price: bigint): Level | undefined {
    return this.levels.get(price);
  }

  ensure(price: bigint): Level {
    let level = this.levels.get(price);
    if (!level) {
      level = { size: 0n, orders: 0, anonymous: 0n };
      this.levels.set(price, level);
      this.prices.splice(this.position(price), 0, price);
    }
    return level;
  }

  dropIfEmpty(price: bigint): void {
    const level = this.levels.get(price);
    if (!level || level.size > 0n) return;
    this.levels.delete(price);
    const i = this.position(price);
    if (this.prices[i] === price) this.prices.splice(i, 1);
  }

  clear(): void {
    this.prices.length = 0;
    this.levels.clear();
  }

  /** Index of `price` in best-first order, or where it would go. */
  private position(price: bigint): number {
    let lo = 0;
    let hi = this.prices.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.prices[mid]!;
      if (this.descending ? p > price : p < price) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  *view(): Generator<LevelView> {
    for (const price of this.prices) {
      const l = this.levels.get(price)!;
      yield { price, size: l.size, count: l.orders + (l.anonymous > 0n ? 1 : 0) };
    }
  }
}

/** A change of one price level (the raw, ungrouped book). */
export interface TouchedLevel {
  side: BookSide;
  price: bigint;
}

export class MarketBook {
  /** Seq of the last event that changed the levels (0: none yet, or not known yet after `seedOrders`). */
  seq = 0;
  /** Seq of the last event this book reflects (changed or not): later events apply, earlier ones are in it already. */
  through = 0;
  readonly bids = new SideLevels(true);
  readonly asks = new SideLevels(false);
  private readonly resting = new Map<string, RestingOrder>();
  /** Placed limit orders still crossing the book: the taker of the matches that follow. */
  private readonly pending = new Map<string, RestingOrder>();

  constructor(readonly market: string) {}

  side(side: BookSide): SideLevels {
    return side === 'buy' ? this.bids : this.asks;
  }

  /** Resting orders known by id (for tests and metrics). */
  get orderCount(): number {
    return this.resting.size;
  }

  /**
   * Applies one engine event of this market; returns the levels it changed (empty when the book
   * did not change). Malformed events change nothing.
   */
  apply(event: EngineEvent): TouchedLevel[] {
    const touched: TouchedLevel[] = [];
    if (event.seq > this.through) this.through = event.seq;
    try {
      switch (event.kind) {
        case 'engine.order_placed':
          this.placed(event.payload.order as Record<string, unknown> | undefined);
          break;
        case 'engine.order_filled':
          this.filled(event.payload, touched);
          break;
        case 'engine.order_cancelled':
          this.cancelled(event.payload.orderId, touched);
          break;
        default:
          return touched;
      }
    } catch {
      // A decimal the engine should never send: the event is ignored here (the reconciliation
      // with the engine's polled book repairs what that leaves wrong).
    }
    this.restPending(touched);
    if (touched.length > 0) this.seq = event.seq;
    return touched;
  }

  private placed(order: Record<string, unknown> | undefined): void {
    if (!order || typeof order.orderId !== 'string') return;
    if (order.type !== 'limit' || order.tif === 'ioc') return; // never rests
    if (order.status !== 'open' && order.status !== 'partially_filled') return;
    const side = order.side === 'buy' || order.side === 'sell' ? order.side : null;
    if (!side || typeof order.price !== 'string' || typeof order.size !== 'string') return;
    const filled = typeof order.filledSize === 'string' ? parseDecimal(order.filledSize) : 0n;
    const remaining = parseDecimal(order.size) - filled;
    if (remaining <= 0n || this.resting.has(order.orderId)) return;
    this.pending.set(order.orderId, { side, price: parseDecimal(order.price), remaining });
  }

  private filled(p: Record<string, unknown>, touched: TouchedLevel[]): void {
    if (typeof p.price !== 'string' || typeof p.size !== 'string') return;
    const price = parseDecimal(p.price);
    const size = parseDecimal(p.size);
    const takerSide = p.takerSide === 'buy' || p.takerSide === 'sell' ? p.takerSide : null;
    if (!takerSide) return;
    if (typeof p.takerOrderId === 'string') {
      const taker = this.pending.get(p.takerOrderId);
      if (taker) {
        taker.remaining -= size;
        if (taker.remaining <= 0n) this.pending.delete(p.takerOrderId);
      } else if (this.resting.has(p.takerOrderId)) {
        // Not expected (a resting order is matched as a maker), but keep the book exact if it happens.
        this.reduce(p.takerOrderId, size, touched);
      }
    }
    const makerId = typeof p.makerOrderId === 'string' ? p.makerOrderId : null;
    if (makerId !== null && this.resting.has(makerId)) {
      this.reduce(makerId, size, touched);
      return;
    }
    // A maker this book does not know: the size came from an anonymous level at the fill price.
    const makerSide: BookSide = takerSide === 'buy' ? 'sell' : 'buy';
    const levels = this.side(makerSide);
    const level = levels.get(price);
    if (!level || level.anonymous <= 0n) return;
    const take = size < level.anonymous ? size : level.anonymous;
    level.anonymous -= take;
    level.size -= take;
    levels.dropIfEmpty(price);
    touched.push({ side: makerSide, price });
  }

  private reduce(orderId: string, size: bigint, touched: TouchedLevel[]): void {
    const o = this.resting.get(orderId)!;
    const levels = this.side(o.side);
    const level = levels.get(o.price);
    const take = size < o.remaining ? size : o.remaining;
    o.remaining -= take;
    if (level) {
      level.size -= take;
      if (o.remaining <= 0n) level.orders -= 1;
    }
    if (o.remaining <= 0n) this.resting.delete(orderId);
    levels.dropIfEmpty(o.price);
    touched.push({ side: o.side, price: o.price });
  }

  private cancelled(orderId: unknown, touched: TouchedLevel[]): void {
    if (typeof orderId !== 'string') return;
    if (this.pending.delete(orderId)) return;
    const o = this.resting.get(orderId);
    if (!o) return;
    this.reduce(orderId, o.remaining, touched);
  }

  /** Pending takers that no longer cross join the book (what the engine rests after matching). */
  private restPending(touched: TouchedLevel[]): void {
    if (this.pending.size === 0) return;
    for (const [orderId, o] of this.pending) {
      const other = o.side === 'buy' ? this.asks.best() : this.bids.best();
      const crosses = other !== undefined && (o.side === 'buy' ? other <= o.price : other >= o.price);
      if (crosses) continue;
      this.pending.delete(orderId);
      this.resting.set(orderId, o);
      const level = this.side(o.side).ensure(o.price);
      level.size += o.remaining;
      level.orders += 1;
      touched.push({ side: o.side, price: o.price });
    }
  }

  /**
   * Seeds an empty book with the resting orders of the engine after event `asOfSeq`, oldest first
   * (docs/stream.md "Order book from events"). Each joins as a placement does: an order that still
   * crosses what rests before it was being matched at `asOfSeq` and waits, as a pending taker, for
   * the fills that follow. The book's `seq` stays 0 (unknown) until an event changes it or the
   * caller learns it (BookKeeper).
   */
  seedOrders(orders: readonly BookSeedOrder[], asOfSeq: number): void {
    this.clear();
    for (const o of orders) {
      const remaining = parseDecimal(o.remaining);
      if (remaining <= 0n || this.pending.has(o.orderId)) continue;
      this.pending.set(o.orderId, { side: o.side, price: parseDecimal(o.price), remaining });
      this.restPending([]);
    }
    this.through = asOfSeq;
  }

  /** The levels of both sides as text (price:size:count per level), for comparing two books. */
  levelsKey(): string {
    const side = (l: SideLevels): string => [...l.view()].map((v) => `${v.price}:${v.size}:${v.count}`).join(',');
    return `${side(this.bids)}|${side(this.asks)}`;
  }

  /**
   * Makes the best `bids.length`/`asks.length` levels exactly the given ones (the engine's polled
   * book, the reconciliation source) and sets the seq. Known orders at prices that vanish are
   * forgotten; a level whose size differs keeps its known orders that fit and makes the rest
   * anonymous. Levels deeper than the given window are kept when `complete` is false.
   */
  replaceLevels(bids: ReadonlyArray<readonly [bigint, bigint]>, asks: ReadonlyArray<readonly [bigint, bigint]>, seq: number, depth: number): void {
    this.replaceSide('buy', bids, depth);
    this.replaceSide('sell', asks, depth);
    this.pending.clear();
    this.seq = seq;
    if (seq > this.through) this.through = seq;
  }

  private replaceSide(side: BookSide, given: ReadonlyArray<readonly [bigint, bigint]>, depth: number): void {
    const levels = this.side(side);
    // The window the engine described: its `depth` best levels; when it returned fewer, the whole side.
    const whole = given.length < depth;
    const last = given.length > 0 ? given[given.length - 1]![0] : undefined;
    const inWindow = (price: bigint): boolean =>
      whole || last === undefined || (side === 'buy' ? price >= last : price <= last);
    const wanted = new Map(given.map(([p, s]) => [p, s]));
    for (const price of [...levels.prices]) {
      if (!inWindow(price) || wanted.has(price)) continue;
      this.forgetAt(side, price);
      const level = levels.get(price)!;
      level.size = 0n;
      levels.dropIfEmpty(price);
    }
    for (const [price, size] of wanted) {
      const level = levels.ensure(price);
      if (level.size === size) continue;
      const known = level.size - level.anonymous;
      if (known > size) {
        this.forgetAt(side, price);
        level.orders = 0;
        level.anonymous = size;
      } else {
        level.anonymous = size - known;
      }
      level.size = size;
      levels.dropIfEmpty(price);
    }
  }

  private forgetAt(side: BookSide, price: bigint): void {
    for (const [id, o] of this.resting) if (o.side === side && o.price === price) this.resting.delete(id);
  }

  /** Empties the book (the engine's history was replaced). */
  clear(): void {
    this.bids.clear();
    this.asks.clear();
    this.resting.clear();
    this.pending.clear();
    this.seq = 0;
    this.through = 0;
  }
}
