// Order book frames that must not reach the consumer after a reconnect (docs/client.md "Order
// books"): a resumed connection replays the polled books of its history and then sends the
// current one, so without this gate a screen would show up to a few dozen older books before the
// current one. Per market, a book frame at or below the book seq already delivered is dropped.
//
//   polled orderbook.snapshot (spec frames)  seq = the book's seq: dropped when <= the delivered one.
//   view orderbook.snapshot (delta mode)     bookSeq: dropped when below the delivered one (a repair
//                                            re-sends the same bookSeq with other levels: delivered).
//   orderbook.delta                          dropped when its bookSeq is not above the delivered one.
import type { Frame } from './types.js';

type BookFrame = { kind: string; seq: number; market?: string; payload: { bookSeq?: number } };

export class BookFrameGate {
  private readonly delivered = new Map<string, number>();

  /** true when the frame is to be delivered (non-book frames always are). */
  admit(frame: Frame): boolean {
    const f = frame as unknown as BookFrame;
    if ((f.kind !== 'orderbook.snapshot' && f.kind !== 'orderbook.delta') || f.market === undefined) return true;
    const bookSeq = typeof f.payload.bookSeq === 'number' ? f.payload.bookSeq : f.seq;
    const before = this.delivered.get(f.market);
    if (before !== undefined) {
      const isView = f.kind === 'orderbook.snapshot' && typeof f.payload.bookSeq === 'number';
      if (isView ? bookSeq < before : bookSeq <= before) return false;
    }
    this.delivered.set(f.market, bookSeq);
    return true;
  }

  /** The engine history changed: book seqs of the old one mean nothing. */
  clear(): void {
    this.delivered.clear();
  }
}
