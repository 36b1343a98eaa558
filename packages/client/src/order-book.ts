// A market's order book kept from `orderbook.snapshot` + `orderbook.delta` frames of a delta
// subscription (kinds include `orderbook.delta`; docs/stream.md "Order book deltas"). Each delta
// must continue the chain (its prevBookSeq is the bookSeq held) and every frame's checksum must
// match the book after applying it — CRC-32 of the first 25 levels interleaved bid then ask as
// `price:size` pairs, computed with the crc-32 package (the same IEEE polynomial as zlib's) — or
// the book is out of sync: `apply` answers 'resync' and the caller reconnects for a fresh snapshot.
import CRC32 from 'crc-32';
import type { OrderbookDeltaFrame } from './generated/wire.js';

/** [price, size, orderCount], best first. */
export type BookLevel = [string, string, number];

export type BookApplyResult = 'applied' | 'ignored' | 'resync';

interface BookMessage {
  kind: string;
  market?: string;
  payload: { bookSeq?: number; prevBookSeq?: number; checksum?: number; bids: unknown[]; asks: unknown[] };
}

export type OrderbookDelta = OrderbookDeltaFrame;

const CHECKSUM_LEVELS = 25;

/** The checksum of a book as the gateway computes it (docs/stream.md). */
export function bookChecksum(bids: readonly BookLevel[], asks: readonly BookLevel[]): number {
  const parts: string[] = [];
  for (let i = 0; i < CHECKSUM_LEVELS; i++) {
    const b = bids[i];
    const a = asks[i];
    if (b) parts.push(b[0], b[1]);
    if (a) parts.push(a[0], a[1]);
  }
  return CRC32.str(parts.join(':')) >>> 0;
}

/** Decimal strings with 10 places compared as numbers (exact: same scale, so by length then text). */
function compareDecimal(a: string, b: string): number {
  const na = a.startsWith('-');
  const nb = b.startsWith('-');
  if (na !== nb) return na ? -1 : 1;
  const sign = na ? -1 : 1;
  if (a.length !== b.length) return (a.length - b.length) * sign;
  return (a < b ? -1 : a > b ? 1 : 0) * sign;
}

const isZero = (size: string): boolean => /^-?0(\.0*)?$/.test(size);

export class DeltaOrderBook {
  private bidLevels = new Map<string, BookLevel>();
  private askLevels = new Map<string, BookLevel>();
  private sortedBids: BookLevel[] | null = [];
  private sortedAsks: BookLevel[] | null = [];
  /** The bookSeq held; null before the first snapshot (and after a resync was asked). */
  bookSeq: number | null = null;

  constructor(readonly market: string) {}

  get bids(): BookLevel[] {
    return (this.sortedBids ??= [...this.bidLevels.values()].sort((x, y) => compareDecimal(y[0], x[0])));
  }

  get asks(): BookLevel[] {
    return (this.sortedAsks ??= [...this.askLevels.values()].sort((x, y) => compareDecimal(x[0], y[0])));
  }

  /** Applies a book frame of this market (any other frame is 'ignored'). */
  apply(message: { kind: string; market?: string | null; payload: object }): BookApplyResult {
    const frame = message as BookMessage;
    if (frame.market !== this.market) return 'ignored';
    const p = frame.payload;
    if (typeof p.bookSeq !== 'number' || typeof p.checksum !== 'number') return 'ignored'; // a polled spec snapshot
    if (frame.kind === 'orderbook.snapshot') {
      this.bidLevels = new Map((p.bids as BookLevel[]).map((l) => [l[0], l]));
      this.askLevels = new Map((p.asks as BookLevel[]).map((l) => [l[0], l]));
    } else if (frame.kind === 'orderbook.delta') {
      if (this.bookSeq === null || p.prevBookSeq !== this.bookSeq) return this.outOfSync();
      for (const [levels, changes] of [
        [this.bidLevels, p.bids as BookLevel[]],
        [this.askLevels, p.asks as BookLevel[]],
      ] as const) {
        for (const l of changes) {
          if (isZero(l[1])) levels.delete(l[0]);
          else levels.set(l[0], l);
        }
      }
    } else return 'ignored';
    this.sortedBids = null;
    this.sortedAsks = null;
    this.bookSeq = p.bookSeq;
    if (bookChecksum(this.bids, this.asks) !== p.checksum) return this.outOfSync();
    return 'applied';
  }

  private outOfSync(): BookApplyResult {
    this.bookSeq = null;
    return 'resync';
  }
}
