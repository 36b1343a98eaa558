// User channels (docs/stream.md "User channels"): `order.update` and `fill` frames, scoped to the
// party of the order or the leg (`userParty`), so only a connection that proved that party gets
// them. Built from the engine events:
//
//   engine.order_placed     order.update status open (or as placed), filledSize 0
//   engine.order_filled     per leg: one `fill` frame to the leg's party (its own leg only:
//                           price, size, fee, role, order id, position id); per order of the
//                           match: one order.update (filledSize summed over its legs — a flip
//                           has two legs for one order — and the average price)
//   engine.order_cancelled  order.update status cancelled with `reason` user|ioc|margin|reduce_only
//   engine.order_rejected   order.update status rejected, reason rejected, `code` the engine's
//
// The orders known here are those placed while this process watched, and those a connection's
// snapshot read from the engine (`know`); a fill of an order known to neither still sends its
// `fill` frame, and an order.update with what the fill says (filledSize counts from this fill on).
import { formatDecimal, parseDecimal } from '../decimal.js';
import type { EngineEvent, FillPayload } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import { asFill } from './fill.js';

export type TerminalReason = 'user' | 'ioc' | 'margin' | 'reduce_only' | 'rejected';

export interface TrackedOrder {
  orderId: string;
  party: string;
  market: string;
  side: string;
  type: string;
  price: string | null;
  size: bigint | null;
  filled: bigint;
  /** Sum of size × price of the fills, scaled by SCALE² (divided once for the average). */
  notional: bigint;
  status: string;
  clientOrderId: string | null;
}

/** Non-terminal orders kept per party: more than this for one party is dropped oldest first. */
const MAX_OPEN_PER_PARTY = 10_000;
const TERMINAL = new Set(['filled', 'cancelled', 'rejected']);

export class UserOrders {
  private readonly orders = new Map<string, TrackedOrder>();
  private readonly perParty = new Map<string, Set<string>>();

  /** The party's open orders known here (for the snapshot on subscribe). */
  open(party: string): TrackedOrder[] {
    return [...(this.perParty.get(party) ?? [])].map((id) => this.orders.get(id)!).filter((o) => o !== undefined);
  }

  /** Learns an open order read from the engine (the snapshot on subscribe), unless already known. */
  know(o: { orderId: string; party: string; market: string; side: string; type: string; price: string | null; size: string; filledSize: string; avgPrice: string | null; status: string; clientOrderId?: string | null }): void {
    if (this.orders.has(o.orderId) || TERMINAL.has(o.status)) return;
    const filled = parseDecimal(o.filledSize);
    this.track({
      orderId: o.orderId,
      party: o.party,
      market: o.market,
      side: o.side,
      type: o.type,
      price: o.price,
      size: parseDecimal(o.size),
      filled,
      notional: o.avgPrice === null ? 0n : filled * parseDecimal(o.avgPrice),
      status: o.status,
      clientOrderId: o.clientOrderId ?? null,
    });
  }

  /** The frames of one engine event (in order), updating the orders. */
  apply(event: EngineEvent, fill = asFill(event)): Frame[] {
    try {
      switch (event.kind) {
        case 'engine.order_placed':
          return this.placed(event);
        case 'engine.order_filled':
          return this.filled(event, fill);
        case 'engine.order_cancelled':
          return this.cancelled(event);
        case 'engine.order_rejected':
          return this.rejected(event);
        default:
          return [];
      }
    } catch {
      return []; // a malformed decimal from the engine: no user frames for that event
    }
  }

  /** The engine history was replaced. */
  clear(): void {
    this.orders.clear();
    this.perParty.clear();
  }

  private track(o: TrackedOrder): void {
    this.orders.set(o.orderId, o);
    let ids = this.perParty.get(o.party);
    if (!ids) this.perParty.set(o.party, (ids = new Set()));
    ids.add(o.orderId);
    if (ids.size > MAX_OPEN_PER_PARTY) {
      const oldest = ids.values().next().value as string;
      ids.delete(oldest);
      this.orders.delete(oldest);
    }
  }

  private settle(o: TrackedOrder): void {
    this.orders.delete(o.orderId);
    const ids = this.perParty.get(o.party);
    ids?.delete(o.orderId);
    if (ids?.size === 0) this.perParty.delete(o.party);
  }

  private placed(event: EngineEvent): Frame[] {
    const order = event.payload.order as Record<string, unknown> | undefined;
    if (!order || typeof order.orderId !== 'string' || typeof order.party !== 'string' || typeof order.market !== 'string' || typeof order.size !== 'string') return [];
    const o: TrackedOrder = {
      orderId: order.orderId,
      party: order.party,
      market: order.market,
      side: String(order.side),
      type: String(order.type),
      price: typeof order.price === 'string' ? order.price : null,
      size: parseDecimal(order.size),
      filled: typeof order.filledSize === 'string' ? parseDecimal(order.filledSize) : 0n,
      notional: 0n,
      status: typeof order.status === 'string' ? order.status : 'open',
      clientOrderId: typeof order.clientOrderId === 'string' ? order.clientOrderId : null,
    };
    if (!TERMINAL.has(o.status)) this.track(o);
    return [orderFrame(o, event)];
  }

  private filled(event: EngineEvent, fill: FillPayload | null): Frame[] {
    if (!fill) return [];
    const frames: Frame[] = [];
    const byOrder = new Map<string, { party: string; side: string; size: bigint; notional: bigint }>();
    for (const leg of fill.legs) {
      frames.push({
        kind: 'fill',
        seq: event.seq,
        ts: event.ts,
        market: event.market!,
        userParty: leg.party,
        payload: {
          matchId: fill.matchId,
          orderId: leg.orderId,
          positionId: leg.positionId,
          side: leg.side,
          role: leg.role,
          price: leg.price,
          size: leg.size,
          fee: leg.fee,
          realizedPnl: leg.realizedPnl,
        },
      });
      const sum = byOrder.get(leg.orderId) ?? { party: leg.party, side: leg.side, size: 0n, notional: 0n };
      const size = parseDecimal(leg.size);
      sum.size += size;
      sum.notional += size * parseDecimal(leg.price);
      byOrder.set(leg.orderId, sum);
    }
    for (const [orderId, sum] of byOrder) {
      let o = this.orders.get(orderId);
      if (!o) {
        // Placed before this process watched: what the fills say from here on.
        o = { orderId, party: sum.party, market: event.market!, side: sum.side, type: 'unknown', price: null, size: null, filled: 0n, notional: 0n, status: 'partially_filled', clientOrderId: null };
      }
      o.filled += sum.size;
      o.notional += sum.notional;
      o.status = o.size !== null && o.filled >= o.size ? 'filled' : 'partially_filled';
      if (o.status === 'filled') this.settle(o);
      else if (!this.orders.has(orderId)) this.track(o);
      frames.push(orderFrame(o, event));
    }
    return frames;
  }

  private cancelled(event: EngineEvent): Frame[] {
    const p = event.payload;
    if (typeof p.orderId !== 'string' || typeof event.party !== 'string') return [];
    const reason = p.reason === 'user' || p.reason === 'ioc' || p.reason === 'margin' || p.reason === 'reduce_only' ? p.reason : 'user';
    const o = this.orders.get(p.orderId) ?? unseenOrder(p.orderId, event.party, event.market, 'cancelled', null);
    o.status = 'cancelled';
    this.settle(o);
    return [orderFrame(o, event, { reason })];
  }

  private rejected(event: EngineEvent): Frame[] {
    const p = event.payload;
    if (typeof event.party !== 'string') return [];
    const o = unseenOrder('', event.party, event.market, 'rejected', typeof p.clientOrderId === 'string' ? p.clientOrderId : null);
    return [orderFrame(o, event, { reason: 'rejected', code: typeof p.code === 'string' ? p.code : 'rejected', error: typeof p.error === 'string' ? p.error : '' })];
  }
}

/** notional is in units² (size × price, both scaled by 10^10): one division gives the price's units. */
export function averagePrice(o: Pick<TrackedOrder, 'filled' | 'notional'>): string | null {
  return o.filled === 0n ? null : formatDecimal(o.notional / o.filled);
}

/** An order.update frame (also used for the snapshot on subscribe, with the order's own seq). */
export function orderFrame(o: TrackedOrder, at: { seq: number; ts: string }, terminal?: { reason: TerminalReason; code?: string; error?: string }): Frame {
  const frame: Frame = {
    kind: 'order.update',
    seq: at.seq,
    ts: at.ts,
    userParty: o.party,
    payload: {
      orderId: o.orderId === '' ? null : o.orderId,
      clientOrderId: o.clientOrderId,
      side: o.side,
      type: o.type,
      price: o.price === null ? null : formatDecimal(parseDecimal(o.price)),
      size: o.size === null ? null : formatDecimal(o.size),
      filledSize: formatDecimal(o.filled),
      avgPrice: averagePrice(o),
      status: o.status,
      reason: terminal?.reason ?? null,
      code: terminal?.code ?? null,
      error: terminal?.error ?? null,
      asOfSeq: at.seq,
    },
  };
  if (o.market !== '') frame.market = o.market;
  return frame;
}

/**
 * An order this projection never saw placed (placed before the process started, or refused before
 * it rested): only what the ending event says of it, side and type unknown, nothing filled.
 */
function unseenOrder(orderId: string, party: string, market: string | undefined, status: TrackedOrder['status'], clientOrderId: string | null): TrackedOrder {
  return { orderId, party, market: market ?? '', side: 'unknown', type: 'unknown', price: null, size: null, filled: 0n, notional: 0n, status, clientOrderId };
}
