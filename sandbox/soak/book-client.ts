// The soak's order book client: what a front end drawing the book does (docs/stream.md "Order book
// deltas"). It asks for `orderbook.delta` of every market at depth 100, applies each frame as the
// document says (a snapshot replaces; a delta applies only on `prevBookSeq` = the bookSeq held; the
// CRC-32 of the top 25 levels checked after each) and resubscribes on a new connection after a
// mismatch or a close. Its presence makes the gateway keep the books from events, so the soak's
// check of `bff_book_divergences_total` judges something; its own counts say what a screen saw.
import { crc32 } from 'node:zlib';
import WebSocket from 'ws';

type L = [string, string, number];

interface Book {
  bids: Map<string, L>;
  asks: Map<string, L>;
  bookSeq: number | null;
}

export class BookClient {
  readonly counts = { connects: 0, snapshots: 0, liveSnapshots: 0, deltas: 0, gaps: 0, checksumMismatches: 0 };
  private readonly books = new Map<string, Book>();
  private ws: WebSocket | null = null;
  private stopped = false;

  constructor(private readonly url: string) {}

  start(): void {
    if (this.stopped) return;
    this.books.clear();
    this.counts.connects++;
    const ws = new WebSocket(`${this.url}?kinds=orderbook.delta&depth=100`);
    this.ws = ws;
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { kind: string; market?: string; snapshot?: boolean; payload: Record<string, any> };
      if (m.market && !this.apply(m as typeof m & { market: string })) ws.close(); // drifted: resubscribe fresh
    });
    ws.on('error', () => {});
    ws.on('close', () => {
      if (!this.stopped) setTimeout(() => this.start(), 500).unref();
    });
  }

  /** false when the book no longer follows (a gap or a checksum mismatch). */
  private apply(m: { kind: string; market: string; snapshot?: boolean; payload: Record<string, any> }): boolean {
    let book = this.books.get(m.market);
    if (m.kind === 'orderbook.snapshot') {
      book = { bids: new Map(m.payload.bids.map((l: L) => [l[0], l])), asks: new Map(m.payload.asks.map((l: L) => [l[0], l])), bookSeq: m.payload.bookSeq };
      this.books.set(m.market, book);
      this.counts.snapshots++;
      if (m.snapshot !== true) this.counts.liveSnapshots++; // the gateway rebuilt the book (a seed, a repair)
    } else if (m.kind === 'orderbook.delta') {
      if (!book || m.payload.prevBookSeq !== book.bookSeq) {
        this.counts.gaps++;
        return false;
      }
      for (const [side, levels] of [
        [book.bids, m.payload.bids],
        [book.asks, m.payload.asks],
      ] as const) {
        for (const l of levels as L[]) {
          if (/^0(\.0*)?$/.test(l[1])) side.delete(l[0]);
          else side.set(l[0], l);
        }
      }
      book.bookSeq = m.payload.bookSeq;
      this.counts.deltas++;
    } else return true;
    if (checksum(book) !== m.payload.checksum) {
      this.counts.checksumMismatches++;
      return false;
    }
    return true;
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close();
  }
}

function checksum(book: Book): number {
  const bids = sortedLevels(book.bids, true);
  const asks = sortedLevels(book.asks, false);
  const parts: string[] = [];
  for (let i = 0; i < 25; i++) {
    if (bids[i]) parts.push(bids[i]![0], bids[i]![1]);
    if (asks[i]) parts.push(asks[i]![0], asks[i]![1]);
  }
  return crc32(parts.join(':')) >>> 0;
}

function sortedLevels(levels: Map<string, L>, descending: boolean): L[] {
  return [...levels.values()].sort((a, b) => (descending ? Number(b[0]) - Number(a[0]) : Number(a[0]) - Number(b[0])));
}
