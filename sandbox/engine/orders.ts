/** Order state held by the engine, its wire form, and the order store. */
import { divRound, formatDec, formatDecOrNull } from './decimal.js';
import type { Market } from './markets.js';
import type { BookOrder } from './orderbook.js';
import type { OrderStatus, OrderType, Side, Tif, WireAttached, WireOrder } from './types.js';

export interface AttachedSpec {
  triggerPrice: bigint;
  limitPrice: bigint | null;
  size: bigint | null;
}

export interface OrderState extends BookOrder {
  orderId: string;
  party: string;
  market: Market;
  side: Side;
  type: OrderType;
  tif: Tif;
  /** Book price (the limit price; 0 for market orders, which never rest). */
  price: bigint;
  /** Wire price: the limit price, or a market order's worst price, or null. */
  limitPrice: bigint | null;
  size: bigint;
  remaining: bigint;
  filled: bigint;
  /** Σ size × price of fills, at scale 10^20. */
  filledNotionalRaw: bigint;
  status: OrderStatus;
  reduceOnly: boolean;
  clientOrderId: string | null;
  tp: AttachedSpec | null;
  sl: AttachedSpec | null;
  /** Trigger ids reserved for the attached legs until they are armed or abandoned. */
  attachedIds: { tp: string | null; sl: string | null };
  attachedResolved: boolean;
  createdAt: string;
  updatedAt: string;
  seq: number;
  /** Margin currently reserved for this resting order. */
  reserved: bigint;
}

export function isTerminal(s: OrderStatus): boolean {
  return s === 'filled' || s === 'cancelled' || s === 'rejected';
}

export function avgPrice(o: OrderState): bigint | null {
  return o.filled === 0n ? null : divRound(o.filledNotionalRaw, o.filled);
}

function attachedToWire(a: AttachedSpec | null): WireAttached | null {
  if (!a) return null;
  return { limitPrice: formatDecOrNull(a.limitPrice), size: formatDecOrNull(a.size), triggerPrice: formatDec(a.triggerPrice) };
}

export function orderToWire(o: OrderState): WireOrder {
  // Keys in sorted order (canonical JSON fast path for the commitments).
  return {
    avgPrice: formatDecOrNull(avgPrice(o)),
    clientOrderId: o.clientOrderId,
    createdAt: o.createdAt,
    filledSize: formatDec(o.filled),
    market: o.market.symbol,
    orderId: o.orderId,
    party: o.party,
    price: formatDecOrNull(o.limitPrice),
    reduceOnly: o.reduceOnly,
    seq: o.seq,
    side: o.side,
    size: formatDec(o.size),
    sl: attachedToWire(o.sl),
    status: o.status,
    tif: o.tif,
    tp: attachedToWire(o.tp),
    type: o.type,
    updatedAt: o.updatedAt,
  };
}

/**
 * All orders by id (terminal ones are kept up to `terminalCap`, oldest forgotten first) and the
 * non-terminal orders of each party.
 */
export class OrderStore {
  private readonly byId = new Map<string, OrderState>();
  private readonly openByParty = new Map<string, Set<OrderState>>();
  private readonly terminalQueue: string[] = [];
  private terminalHead = 0;

  constructor(private readonly terminalCap = 200_000) {}

  get(orderId: string): OrderState | undefined {
    return this.byId.get(orderId);
  }

  add(o: OrderState): void {
    this.byId.set(o.orderId, o);
    let set = this.openByParty.get(o.party);
    if (!set) {
      set = new Set();
      this.openByParty.set(o.party, set);
    }
    set.add(o);
  }

  /** Call once when an order reaches a terminal status. */
  settle(o: OrderState): void {
    const set = this.openByParty.get(o.party);
    if (set) {
      set.delete(o);
      if (set.size === 0) this.openByParty.delete(o.party);
    }
    this.terminalQueue.push(o.orderId);
    if (this.terminalQueue.length - this.terminalHead > this.terminalCap) {
      const old = this.terminalQueue[this.terminalHead++]!;
      this.byId.delete(old);
      if (this.terminalHead > 65_536) {
        this.terminalQueue.splice(0, this.terminalHead);
        this.terminalHead = 0;
      }
    }
  }

  openFor(party: string, market?: string): OrderState[] {
    const out: OrderState[] = [];
    for (const o of this.openByParty.get(party) ?? []) if (market === undefined || o.market.symbol === market) out.push(o);
    return out;
  }
}
