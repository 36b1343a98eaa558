// A party's orders and fills kept from the user channels `order.update` and `fill`
// (docs/stream.md "User channels"; docs/client.md "My orders and fills"). Both channels send their
// state on subscribe (open orders, the last fills) marked `snapshot`, and again on every
// reconnection, so the stores are idempotent: an order update counts only when its `asOfSeq` is
// above the one held for that order (a snapshot read from the engine may be newer than live frames
// still queued behind it), and a fill leg is kept once by (matchId, orderId, positionId).
import type { FillFrame, Order, OrderUpdateFrame } from './generated/wire.js';

export type OrderUpdate = OrderUpdateFrame['payload'] & { market: string | null; seq: number; ts: string };
export type UserFill = FillFrame['payload'] & { market: string; seq: number; ts: string };

const TERMINAL = new Set(['filled', 'cancelled', 'rejected']);

export const isTerminal = (status: string): boolean => TERMINAL.has(status);

export class UserOrdersStore {
  private readonly byId = new Map<string, OrderUpdate>();
  /** Terminal updates, newest last (rejections have no order id and live only here). */
  private ended: OrderUpdate[] = [];

  /** @param keepEnded how many ended orders to remember (oldest forgotten first). */
  constructor(private readonly keepEnded = 100) {}

  /** Applies an `order.update` frame; true when it changed the store. */
  apply(frame: OrderUpdateFrame): boolean {
    return this.put({ ...frame.payload, market: frame.market ?? null, seq: frame.seq, ts: frame.ts });
  }

  /**
   * Adds orders read over REST (`listUserOrders`, newest first), held only where newer than what the
   * stream gave: the channel's snapshot on subscribe holds the open orders alone, so after a reload
   * this is what brings back the history (a filled order). The mirror keeps no reason for a
   * cancellation: such an order shows `reason: null`. True when anything changed.
   */
  load(orders: readonly Order[]): boolean {
    let changed = false;
    for (const o of [...orders].sort((a, b) => a.updatedSeq - b.updatedSeq)) {
      changed =
        this.put({
          orderId: o.orderId,
          clientOrderId: o.clientOrderId,
          side: o.side,
          type: o.type,
          price: o.price,
          size: o.size,
          filledSize: o.filledSize,
          avgPrice: o.avgPrice,
          status: o.status,
          reason: null,
          code: null,
          error: null,
          asOfSeq: o.updatedSeq,
          market: o.market,
          seq: o.updatedSeq,
          ts: o.updatedAt,
        }) || changed;
    }
    if (changed) this.ended.sort((a, b) => a.asOfSeq - b.asOfSeq);
    return changed;
  }

  private put(update: OrderUpdate): boolean {
    const id = update.orderId;
    if (id !== null) {
      const held = this.byId.get(id);
      if (held && held.asOfSeq >= update.asOfSeq) return false;
      this.byId.set(id, update);
    }
    if (isTerminal(update.status)) {
      this.ended = this.ended.filter((o) => id === null || o.orderId !== id);
      this.ended.push(update);
      if (this.ended.length > this.keepEnded) {
        for (const gone of this.ended.splice(0, this.ended.length - this.keepEnded)) if (gone.orderId !== null) this.byId.delete(gone.orderId);
      }
    }
    return true;
  }

  /** Open and partially filled orders, newest change first. */
  open(): OrderUpdate[] {
    return [...this.byId.values()].filter((o) => !isTerminal(o.status)).sort((a, b) => b.asOfSeq - a.asOfSeq);
  }

  /** Filled, cancelled and rejected orders (with their reason), newest first. */
  recent(): OrderUpdate[] {
    return [...this.ended].reverse();
  }

  get(orderId: string): OrderUpdate | undefined {
    return this.byId.get(orderId);
  }

  /** Another engine history (`stream.reset`): nothing held is true any more. */
  clear(): void {
    this.byId.clear();
    this.ended = [];
  }
}

export class UserFillsStore {
  private readonly keys = new Set<string>();
  private fills: UserFill[] = [];

  constructor(private readonly keep = 100) {}

  /** Applies a `fill` frame; false when that leg is already held (a snapshot sent again). */
  apply(frame: FillFrame): boolean {
    const p = frame.payload;
    const key = `${p.matchId}|${p.orderId}|${p.positionId}`;
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    this.fills.push({ ...p, market: frame.market, seq: frame.seq, ts: frame.ts });
    this.fills.sort((a, b) => a.seq - b.seq);
    if (this.fills.length > this.keep) {
      for (const gone of this.fills.splice(0, this.fills.length - this.keep)) this.keys.delete(`${gone.matchId}|${gone.orderId}|${gone.positionId}`);
    }
    return true;
  }

  /** Newest first. */
  list(): UserFill[] {
    return [...this.fills].reverse();
  }

  clear(): void {
    this.keys.clear();
    this.fills = [];
  }
}
