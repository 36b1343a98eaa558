// Subscriber index: a frame finds its recipients in ~O(matching clients), not O(all clients).
//   public frame with a market:   (kind|*) × (market|*)  — four disjoint buckets
//   public frame without market:  (kind|*)               — two disjoint buckets
//   user-scoped frame:            party                  — then the full filter per candidate
//   book frame made for a view:   kind × view (depth|grouping) × (market|*)
// Each client sits in exactly one bucket per (kind, market) pair, so no frame reaches it twice.
// The view buckets matter at scale: a delta goes to every connection of its view, and judging
// each candidate with the full filter (the view's key made and compared per connection) cost
// more than writing to it.
import { frameParty, type Frame } from '../contracts/frame.js';
import type { StreamClient } from './client.js';
import { bookViewSpecOf, viewSpecKey } from './book-views.js';
import { matches, OPT_IN_KINDS, wantsKind } from './subscription.js';

const ANY = '*';
/** The kinds of the frames made for a book view (src/stream/book-views.ts). */
const BOOK_KINDS: readonly string[] = ['orderbook.delta', 'orderbook.snapshot'];
type Bucket = Set<StreamClient>;

export class SubscriberIndex {
  private readonly byKindMarket = new Map<string, Map<string, Bucket>>();
  private readonly byKind = new Map<string, Bucket>();
  private readonly byParty = new Map<string, Bucket>();
  /** Connections with a book view, by the book kind they take, viewSpecKey of the view, then market (ANY: no markets filter). */
  private readonly byView = new Map<string, Map<string, Map<string, Bucket>>>();
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
    if (sub.book) {
      const spec = viewSpecKey(sub.book);
      for (const kind of BOOK_KINDS) {
        if (!wantsKind(sub, kind)) continue;
        let specs = this.byView.get(kind);
        if (!specs) this.byView.set(kind, (specs = new Map()));
        let markets = specs.get(spec);
        if (!markets) specs.set(spec, (markets = new Map()));
        for (const m of sub.markets ?? [ANY]) bucket(markets, m).add(client);
      }
    }
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
    if (sub.book) {
      const spec = viewSpecKey(sub.book);
      for (const kind of BOOK_KINDS) {
        const specs = this.byView.get(kind);
        const markets = specs?.get(spec);
        if (!specs || !markets) continue;
        for (const m of sub.markets ?? [ANY]) unbucket(markets, m, client);
        if (markets.size === 0) specs.delete(spec);
        if (specs.size === 0) this.byView.delete(kind);
      }
    }
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
    // A book frame made for a view goes to the connections that take its kind, with that view (depth
    // and grouping) and its market: what matches() decides, with nothing left to judge per connection.
    const spec = frame.market !== undefined && BOOK_KINDS.includes(frame.kind) ? bookViewSpecOf(frame) : undefined;
    if (spec !== undefined) {
      const markets = this.byView.get(frame.kind)?.get(spec);
      if (!markets) return;
      const exact = markets.get(frame.market!);
      if (exact) for (const c of exact) visit(c);
      const any = markets.get(ANY);
      if (any) for (const c of any) visit(c);
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
    // The any-kind buckets hold the connections without a kinds filter, which an opt-in kind
    // (a public one such as open_interest.update) never reaches.
    const optIn = OPT_IN_KINDS.has(frame.kind);
    if (frame.market === undefined) {
      each(this.byKind.get(frame.kind));
      if (!optIn) each(this.byKind.get(ANY));
      return;
    }
    const exact = this.byKindMarket.get(frame.kind);
    const anyKind = optIn ? undefined : this.byKindMarket.get(ANY);
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
