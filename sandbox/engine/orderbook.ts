/**
 * Price-time priority order book of one market. Each price level is a FIFO (doubly linked
 * list, O(1) removal); level prices are kept in sorted arrays (best first).
 */
import type { Side } from './types.js';

/** What the book needs to know about a resting order. */
export interface BookOrder {
  orderId: string;
  side: Side;
  price: bigint;
  /** Remaining (unfilled) size. */
  remaining: bigint;
}

interface Node<T extends BookOrder> {
  order: T;
  prev: Node<T> | null;
  next: Node<T> | null;
  level: Level<T>;
}

interface Level<T extends BookOrder> {
  price: bigint;
  head: Node<T> | null;
  tail: Node<T> | null;
  total: bigint;
  count: number;
}

export class OrderBook<T extends BookOrder = BookOrder> {
  /** Bid prices, descending (best first). */
  private readonly bidPrices: bigint[] = [];
  /** Ask prices, ascending (best first). */
  private readonly askPrices: bigint[] = [];
  private readonly bidLevels = new Map<bigint, Level<T>>();
  private readonly askLevels = new Map<bigint, Level<T>>();
  private readonly nodes = new Map<string, Node<T>>();
  /** Seq of the last event that changed this book (0 = never changed). */
  seq = 0;

  constructor(readonly market: string) {}

  get size(): number {
    return this.nodes.size;
  }

  has(orderId: string): boolean {
    return this.nodes.has(orderId);
  }

  /** Append a resting order at the back of its price level. */
  add(order: T): void {
    if (this.nodes.has(order.orderId)) throw new Error(`order ${order.orderId} already rests`);
    const levels = order.side === 'buy' ? this.bidLevels : this.askLevels;
    let level = levels.get(order.price);
    if (!level) {
      level = { price: order.price, head: null, tail: null, total: 0n, count: 0 };
      levels.set(order.price, level);
      insertSorted(order.side === 'buy' ? this.bidPrices : this.askPrices, order.price, order.side === 'buy');
    }
    const node: Node<T> = { order, prev: level.tail, next: null, level };
    if (level.tail) level.tail.next = node;
    else level.head = node;
    level.tail = node;
    level.total += order.remaining;
    level.count++;
    this.nodes.set(order.orderId, node);
  }

  /** Remove a resting order; returns it, or undefined when it does not rest here. */
  remove(orderId: string): T | undefined {
    const node = this.nodes.get(orderId);
    if (!node) return undefined;
    this.nodes.delete(orderId);
    const level = node.level;
    if (node.prev) node.prev.next = node.next;
    else level.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else level.tail = node.prev;
    level.total -= node.order.remaining;
    level.count--;
    if (level.count === 0) this.dropLevel(node.order.side, level.price);
    return node.order;
  }

  /** Reduce a resting order's remaining size after a fill (removes it when it reaches zero). */
  reduce(orderId: string, by: bigint): void {
    const node = this.nodes.get(orderId);
    if (!node) throw new Error(`order ${orderId} does not rest`);
    if (by >= node.order.remaining) {
      this.remove(orderId);
      node.order.remaining = 0n;
      return;
    }
    node.order.remaining -= by;
    node.level.total -= by;
  }

  /** Best resting order on `side` (the head of the best level), or undefined. */
  best(side: Side): T | undefined {
    const prices = side === 'buy' ? this.bidPrices : this.askPrices;
    const p = prices[0];
    if (p === undefined) return undefined;
    const level = (side === 'buy' ? this.bidLevels : this.askLevels).get(p);
    return level?.head?.order;
  }

  bestPrice(side: Side): bigint | undefined {
    return (side === 'buy' ? this.bidPrices : this.askPrices)[0];
  }

  /** Resting orders on `side` in priority order (best price first, then time). */
  *iterate(side: Side): Generator<T> {
    const prices = side === 'buy' ? this.bidPrices : this.askPrices;
    const levels = side === 'buy' ? this.bidLevels : this.askLevels;
    for (const p of [...prices]) {
      let node = levels.get(p)?.head ?? null;
      while (node) {
        const next = node.next;
        yield node.order;
        node = next;
      }
    }
  }

  /** Aggregated levels, best first: [price, total size]. */
  depth(side: Side, n: number): Array<[bigint, bigint]> {
    const prices = side === 'buy' ? this.bidPrices : this.askPrices;
    const levels = side === 'buy' ? this.bidLevels : this.askLevels;
    const out: Array<[bigint, bigint]> = [];
    for (let i = 0; i < prices.length && out.length < n; i++) {
      const p = prices[i]!;
      out.push([p, levels.get(p)!.total]);
    }
    return out;
  }

  private dropLevel(side: Side, price: bigint): void {
    const levels = side === 'buy' ? this.bidLevels : this.askLevels;
    const prices = side === 'buy' ? this.bidPrices : this.askPrices;
    levels.delete(price);
    const i = findIndex(prices, price, side === 'buy');
    if (i >= 0) prices.splice(i, 1);
  }
}

/** Binary search position of `price` in an array sorted descending (desc=true) or ascending. */
function lowerBound(arr: bigint[], price: bigint, desc: boolean): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = arr[mid]!;
    if (desc ? v > price : v < price) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(arr: bigint[], price: bigint, desc: boolean): void {
  arr.splice(lowerBound(arr, price, desc), 0, price);
}

function findIndex(arr: bigint[], price: bigint, desc: boolean): number {
  const i = lowerBound(arr, price, desc);
  return arr[i] === price ? i : -1;
}
