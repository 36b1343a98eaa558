// The trade tape: filled on load from `GET /v1/trades` (newest first) and from the last trades the
// stream sends on subscribe (`trade` frames marked snapshot, again on every reconnection), then
// live. Trades are keyed by seq (one per match), so the two sources and a repeated snapshot merge
// without doubles, whichever answers first.
import type { Trade, TradeFrame } from '@gateway/client';
import { escapeHtml, trim } from './format.js';

interface TapeTrade {
  seq: number;
  side: 'buy' | 'sell';
  price: string;
  size: string;
  ts: string;
}

const KEEP = 100;
const SHOWN = 30;

export class TradeTape {
  private market = '';
  private bySeq = new Map<number, TapeTrade>();

  constructor(private readonly table: HTMLTableElement) {}

  /** Empties the tape for another market. */
  reset(market: string): void {
    this.market = market;
    this.bySeq.clear();
    this.draw();
  }

  /** The REST history (ignored when it answers for a market no longer shown). */
  load(market: string, trades: readonly Trade[]): void {
    if (market !== this.market) return;
    for (const t of trades) this.bySeq.set(t.seq, { seq: t.seq, side: t.side, price: t.price, size: t.size, ts: t.createdAt });
    this.trimAndDraw();
  }

  /** A `trade` frame, snapshot or live; false when it was already on the tape. */
  apply(frame: TradeFrame): boolean {
    if (frame.market !== this.market || this.bySeq.has(frame.seq)) return false;
    this.bySeq.set(frame.seq, { seq: frame.seq, side: frame.payload.side, price: frame.payload.price, size: frame.payload.size, ts: frame.ts });
    this.trimAndDraw();
    return true;
  }

  get size(): number {
    return this.bySeq.size;
  }

  private newest(): TapeTrade[] {
    return [...this.bySeq.values()].sort((a, b) => b.seq - a.seq);
  }

  private trimAndDraw(): void {
    const sorted = this.newest();
    for (const old of sorted.slice(KEEP)) this.bySeq.delete(old.seq);
    this.draw();
  }

  private draw(): void {
    this.table.innerHTML = this.newest()
      .slice(0, SHOWN)
      .map((t) => `<tr data-testid="trade" data-seq="${t.seq}"><td class="${t.side === 'buy' ? 'buy' : 'sell'}">${trim(t.price)}</td><td>${trim(t.size)}</td><td class="dim">${escapeHtml(t.ts.slice(11, 19))}</td></tr>`)
      .join('');
  }
}
