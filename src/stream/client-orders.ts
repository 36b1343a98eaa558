// Orders by client order id (docs/trading.md "Client order ids"): the last state of every order
// that carried a `clientOrderId`, per party, as the user channels tell it (each `order.update`
// frame the live path publishes: placed, each fill, cancel, rejection). A live feature: it only
// reads frames, so it follows the engine events exactly as the user channels do, on every replica.
//
// Bounded: at most `maxEntries` ids; past it the oldest known id is forgotten first (its order is
// then found in the database mirror by the status route, and the duplicate check relies on the
// claim's TTL for it, docs/trading.md).
import type { LiveFeature } from '../contracts/live-feature.js';
import type { Frame } from '../contracts/frame.js';

/** An order by its client id: the user channel's `order.update` payload, with its party and market. */
export interface ClientOrderState {
  party: string;
  market: string | null;
  clientOrderId: string;
  orderId: string | null;
  status: string;
  side: string;
  type: string;
  price: string | null;
  size: string | null;
  filledSize: string;
  avgPrice: string | null;
  reason: string | null;
  code: string | null;
  asOfSeq: number;
}

const key = (party: string, clientOrderId: string): string => `${party}\n${clientOrderId}`;

export class ClientOrders implements LiveFeature {
  readonly name = 'client-orders';
  private readonly byId = new Map<string, ClientOrderState>();

  constructor(private readonly maxEntries = 200_000) {}

  frame(frame: Frame): void {
    if (frame.kind !== 'order.update') return;
    const f = frame as unknown as { userParty: string; market?: string; seq: number; payload: Record<string, unknown> };
    const p = f.payload;
    if (typeof p.clientOrderId !== 'string') return;
    const k = key(f.userParty, p.clientOrderId);
    // Re-inserted so the Map's order is the order of last change: eviction forgets the stalest.
    this.byId.delete(k);
    this.byId.set(k, {
      party: f.userParty,
      market: f.market ?? null,
      clientOrderId: p.clientOrderId,
      orderId: (p.orderId as string | null) ?? null,
      status: String(p.status),
      side: String(p.side),
      type: String(p.type),
      price: (p.price as string | null) ?? null,
      size: (p.size as string | null) ?? null,
      filledSize: String(p.filledSize),
      avgPrice: (p.avgPrice as string | null) ?? null,
      reason: (p.reason as string | null) ?? null,
      code: (p.code as string | null) ?? null,
      asOfSeq: typeof p.asOfSeq === 'number' ? p.asOfSeq : f.seq,
    });
    if (this.byId.size > this.maxEntries) this.byId.delete(this.byId.keys().next().value!);
  }

  /** The order the party placed with this client id, as last told; null when not known here. */
  get(party: string, clientOrderId: string): ClientOrderState | null {
    return this.byId.get(key(party, clientOrderId)) ?? null;
  }

  replaced(): void {
    this.byId.clear();
  }

  get size(): number {
    return this.byId.size;
  }
}
