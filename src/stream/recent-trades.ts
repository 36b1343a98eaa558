// The last trades of each market (docs/stream.md "State on subscribe"): a connection that takes
// `trade` gets up to LAST_TRADES of them per admitted market, oldest first, as snapshot frames
// before live ones, so a trade tape is full at once instead of after the next match. Kept from the
// trade frames this process published (an engine history replacement empties it).
import type { Frame } from '../contracts/frame.js';
import { matches, type Subscription } from './subscription.js';

export const LAST_TRADES = 50;

export class RecentTrades {
  private readonly byMarket = new Map<string, Frame[]>();

  observe(frame: Frame): void {
    if (frame.kind !== 'trade' || frame.market === undefined) return;
    let list = this.byMarket.get(frame.market);
    if (!list) this.byMarket.set(frame.market, (list = []));
    list.push(frame);
    if (list.length > LAST_TRADES) list.shift();
  }

  /** The snapshot frames of a connection (its filters applied). */
  snapshot(sub: Subscription): Frame[] {
    if (sub.kinds && !sub.kinds.has('trade')) return [];
    const out: Frame[] = [];
    for (const list of this.byMarket.values()) for (const f of list) if (matches(sub, f)) out.push(f);
    return out;
  }

  reset(): void {
    this.byMarket.clear();
  }
}
