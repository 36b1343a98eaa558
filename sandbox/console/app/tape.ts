// The trade tape: filled on load from `GET /v1/trades` (newest first) and from the last trades the
// stream sends on subscribe (`trade` frames marked snapshot, again on every reconnection), then
// live. Trades are keyed by seq (one per match), so the two sources and a repeated snapshot merge
// without doubles, whichever answers first.
import { toTrade, type Trade, type TradeFrame } from '@gateway/client';
import { escapeHtml, px, sz } from './format.js';

const KEEP = 100;
const SHOWN = 30;

export class TradeTape {
  private market = '';
  private bySeq = new Map<number, Trade>();

  constructor(private readonly table: HTMLElement) {}

  /** Empties the tape for another market. */
  reset(market: string): void {
    this.market = market;
    this.bySeq.clear();
    this.draw();
  }

  /** The REST history (ignored when it answers for a market no longer shown). */
  load(market: string, trades: readonly Trade[]): void {
    if (market !== this.market) return;
    for (const t of trades) this.bySeq.set(t.seq, t);
    this.trimAndDraw();
  }

  /** A `trade` frame, snapshot or live; false when it was already on the tape. */
  apply(frame: TradeFrame): boolean {
    if (frame.market !== this.market || this.bySeq.has(frame.seq)) return false;
    this.bySeq.set(frame.seq, toTrade(frame));
    this.trimAndDraw();
    return true;
  }

  get size(): number {
    return this.bySeq.size;
  }

  private newest(): Trade[] {
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
      .map((t) => `<tr data-testid="trade" data-seq="${t.seq}"><td class="${t.side === 'buy' ? 'buy' : 'sell'}">${px(t.market, t.price)}</td><td>${sz(t.market, t.size)}</td><td class="dim">${escapeHtml(t.createdAt.slice(11, 19))}</td></tr>`)
      .join('');
  }
}
