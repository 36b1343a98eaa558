// The last trades of each market (docs/stream.md "State on subscribe"): a connection that takes
// `trade` gets up to LAST_TRADES of them per admitted market, oldest first, as snapshot frames
// before live ones, so a trade tape is full at once instead of after the next match. Kept from the
// trade frames this process published, and seeded at start from the database (seed(): the frames
// the live projection makes of the mirror's fill events up to the point the live stream starts
// after), so a restarted gateway has its tape at once. An engine history replacement empties it
// and drops a seed read before it.
import type { Frame } from '../contracts/frame.js';
import type { Database } from '../db/database.js';
import { listMarketRows } from '../db/queries/markets.js';
import { lastMatchEvents } from '../db/queries/trades.js';
import { projectTrade } from '../projections/trades.js';
import { matches, type Subscription } from './subscription.js';

export const LAST_TRADES = 50;

export class RecentTrades {
  private readonly byMarket = new Map<string, Frame[]>();
  /** Bumped by reset(): a seed read before it is dropped. */
  private generation = 0;

  observe(frame: Frame): void {
    if (frame.kind !== 'trade' || frame.market === undefined) return;
    let list = this.byMarket.get(frame.market);
    if (!list) this.byMarket.set(frame.market, (list = []));
    list.push(frame);
    if (list.length > LAST_TRADES) list.shift();
  }

  /**
   * Merges the trades `read` answers (older ones, read from the database) with those observed
   * meanwhile: per market in seq order, one frame per seq (the live one when both have it), the
   * newest LAST_TRADES kept. Nothing waits for it; a read that lands after a reset() is dropped
   * (answered false); one that fails rejects and changes nothing.
   */
  async seed(read: () => Promise<Frame[]>): Promise<boolean> {
    const generation = this.generation;
    const frames = await read();
    if (generation !== this.generation) return false;
    const seeded = new Map<string, Frame[]>();
    for (const f of frames) {
      if (f.kind !== 'trade' || f.market === undefined) continue;
      let list = seeded.get(f.market);
      if (!list) seeded.set(f.market, (list = []));
      list.push(f);
    }
    for (const [market, older] of seeded) {
      const bySeq = new Map<number, Frame>();
      for (const f of older) bySeq.set(f.seq, f);
      for (const f of this.byMarket.get(market) ?? []) bySeq.set(f.seq, f);
      this.byMarket.set(market, [...bySeq.values()].sort((a, b) => a.seq - b.seq).slice(-LAST_TRADES));
    }
    return true;
  }

  /** The snapshot frames of a connection (its filters applied). */
  snapshot(sub: Subscription): Frame[] {
    if (sub.kinds && !sub.kinds.has('trade')) return [];
    const out: Frame[] = [];
    for (const list of this.byMarket.values()) for (const f of list) if (matches(sub, f)) out.push(f);
    return out;
  }

  reset(): void {
    this.generation++;
    this.byMarket.clear();
  }
}

/**
 * The trade frames of each market's last LAST_TRADES matches at or below `upTo` (the seq the live
 * stream starts after), made by the live projection from the mirror's fill events: the frames
 * the live path published for the same matches. One deadline-bound read per market.
 */
export async function tradesFromDatabase(db: Database, upTo: number, n = LAST_TRADES): Promise<Frame[]> {
  const markets = await db.run((sql) => listMarketRows(sql));
  const events = await Promise.all(markets.map((m) => db.run((sql) => lastMatchEvents(sql, m.symbol, upTo, n))));
  return events.flat().flatMap((e) => projectTrade(e));
}
