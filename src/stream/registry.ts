// Subscriber index: a frame finds its recipients in ~O(matching clients), not O(all clients).
//   public frame with a market:   (kind|*) × (market|*)  — four disjoint buckets
//   public frame without market:  (kind|*)               — two disjoint buckets
//   user-scoped frame:            party                  — then the full filter per candidate
// Each client sits in exactly one bucket per (kind, market) pair, so no frame reaches it twice.
import { frameParty, type Frame } from '../contracts/frame.js';
import type { StreamClient } from './client.js';
import { matches } from './subscription.js';

const ANY = '*';
type Bucket = Set<StreamClient>;

export class SubscriberIndex {
  private readonly byKindMarket = new Map<string, Map<string, Bucket>>();
  private readonly byKind = new Map<string, Bucket>();
  private readonly byParty = new Map<string, Bucket>();
  private readonly all = new Set<StreamClient>();

  get size(): number {
    return this.all.size;
  }

  has(client: StreamClient): boolean {
    return this.all.has(client);
  }

  clients(): IterableIterator<StreamClient> {
    return this.all.values();
  }

  add(client: StreamClient): void {
    this.all.add(client);
    const { sub } = client;
    for (const p of sub.parties) bucket(this.byParty, p).add(client);
    for (const k of sub.kinds ?? [ANY]) {
      bucket(this.byKind, k).add(client);
      let markets = this.byKindMarket.get(k);
      if (!markets) this.byKindMarket.set(k, (markets = new Map()));
      for (const m of sub.markets ?? [ANY]) bucket(markets, m).add(client);
    }
  }

  remove(client: StreamClient): void {
    if (!this.all.delete(client)) return;
    const { sub } = client;
    for (const p of sub.parties) unbucket(this.byParty, p, client);
    for (const k of sub.kinds ?? [ANY]) {
      unbucket(this.byKind, k, client);
      const markets = this.byKindMarket.get(k);
      if (!markets) continue;
      for (const m of sub.markets ?? [ANY]) unbucket(markets, m, client);
      if (markets.size === 0) this.byKindMarket.delete(k);
    }
  }

  /** Calls `visit` once for every client that receives `frame`. */
  forEachRecipient(frame: Frame, visit: (client: StreamClient) => void): void {
    const party = frameParty(frame);
    if (party !== undefined) {
      const b = this.byParty.get(party);
      if (b) for (const c of b) if (matches(c.sub, frame)) visit(c);
      return;
    }
    // Candles (intervals) and book frames (views) have a filter the index does not hold.
    // Engine fills: a connection with a party filter gets only those with its legs.
    const needsCheck =
      frame.interval !== undefined || frame.kind === 'orderbook.snapshot' || frame.kind === 'orderbook.delta' || frame.kind === 'engine.order_filled';
    const each = (b: Bucket | undefined): void => {
      if (!b) return;
      if (needsCheck) {
        for (const c of b) if (matches(c.sub, frame)) visit(c);
      } else {
        for (const c of b) visit(c);
      }
    };
    if (frame.market === undefined) {
      each(this.byKind.get(frame.kind));
      each(this.byKind.get(ANY));
      return;
    }
    const exact = this.byKindMarket.get(frame.kind);
    const anyKind = this.byKindMarket.get(ANY);
    each(exact?.get(frame.market));
    each(exact?.get(ANY));
    each(anyKind?.get(frame.market));
    each(anyKind?.get(ANY));
  }
}

function bucket(map: Map<string, Bucket>, key: string): Bucket {
  let b = map.get(key);
  if (!b) map.set(key, (b = new Set()));
  return b;
}

function unbucket(map: Map<string, Bucket>, key: string, client: StreamClient): void {
  const b = map.get(key);
  if (!b) return;
  b.delete(client);
  if (b.size === 0) map.delete(key);
}
