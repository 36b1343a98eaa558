// A client's order book from `orderbook.snapshot` + `orderbook.delta` frames, kept exactly as
// docs/stream.md tells a front end to: a snapshot replaces the book; a delta applies only when its
// prevBookSeq is the bookSeq held (else a gap is recorded), size 0 removes the level; the CRC-32 of
// the top 25 levels is checked after every frame. `onFrame` sees the book after each frame.
import { crc32 } from 'node:zlib';
import { parseDecimal } from '../../src/decimal.js';

export type Level = [string, string, number];

export class ClientBook {
  bids = new Map<string, Level>();
  asks = new Map<string, Level>();
  bookSeq: number | null = null;
  errors: string[] = [];
  snapshots = 0;
  deltas = 0;

  constructor(private readonly onFrame?: (book: ClientBook) => void) {}

  apply(m: { kind: string; payload: Record<string, any> }): void {
    if (m.kind === 'orderbook.snapshot') {
      this.bids = new Map(m.payload.bids.map((l: Level) => [l[0], l]));
      this.asks = new Map(m.payload.asks.map((l: Level) => [l[0], l]));
      this.snapshots++;
    } else if (m.kind === 'orderbook.delta') {
      if (m.payload.prevBookSeq !== this.bookSeq) this.errors.push(`gap: prev ${m.payload.prevBookSeq} held ${this.bookSeq}`);
      for (const [side, levels] of [
        [this.bids, m.payload.bids],
        [this.asks, m.payload.asks],
      ] as const) {
        for (const l of levels as Level[]) {
          if (parseDecimal(l[1]) === 0n) side.delete(l[0]);
          else side.set(l[0], l);
        }
      }
      this.deltas++;
    } else return;
    this.bookSeq = m.payload.bookSeq;
    if ((crc32(checksumText(this.sorted('buy'), this.sorted('sell'))) >>> 0) !== m.payload.checksum) this.errors.push(`checksum at bookSeq ${m.payload.bookSeq}`);
    this.onFrame?.(this);
  }

  /** The side's levels, best first. */
  sorted(side: 'buy' | 'sell'): Level[] {
    const levels = [...(side === 'buy' ? this.bids : this.asks).values()];
    return levels.sort((a, b) => {
      const d = parseDecimal(a[0]) - parseDecimal(b[0]);
      return (side === 'buy' ? -d : d) > 0n ? 1 : -1;
    });
  }
}

/** The checksum's text: the first 25 levels interleaved, bid then ask, `price:size` (docs/stream.md). */
export function checksumText(bids: Level[], asks: Level[]): string {
  const parts: string[] = [];
  for (let i = 0; i < 25; i++) {
    if (bids[i]) parts.push(bids[i]![0], bids[i]![1]);
    if (asks[i]) parts.push(asks[i]![0], asks[i]![1]);
  }
  return parts.join(':');
}
