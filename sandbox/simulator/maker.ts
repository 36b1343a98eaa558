// The simulator's market maker: one party that keeps a ladder of LEVELS limit orders on each side of
// every market, innermost a step from the simulator's mid, so both sides of every book stay a few
// ticks from the last trade (the mark) and deep enough that no taker of the simulator empties them.
// Levels sit on fixed multiples of the step, so a mid that moves less than a step changes nothing and
// one that moves a step costs one cancel and one place a side.
import type { Bot, EngineAnswer } from './bot.js';
import { call } from './bot.js';
import { gridPrice, gridSize, gridTick, type MarketInfo } from './grid.js';
import type { Pool } from 'undici';

/** Price levels kept on each side (the book must show at least 10 a side). */
export const LEVELS = 12;
/** The step between levels, as a fraction of the price, rounded up to whole ticks (1 tick at least). */
const STEP_FRACTION = 0.00003;
/** Notional per level: many times the largest taker of the simulator (800). */
const LEVEL_NOTIONAL = 4000;

type Side = 'buy' | 'sell';

export class MarketMaker {
  /** Per market and side: price → ids of the maker's orders resting there. */
  private readonly orders = new Map<string, Map<string, string[]>>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly bot: Bot,
    private readonly pool: Pool,
    private readonly record: (r: EngineAnswer) => void,
  ) {}

  get party(): string {
    return this.bot.party;
  }

  /** The prices the ladder wants on one side around `mid`, best first. */
  static ladder(m: MarketInfo, mid: number, side: Side): string[] {
    const tick = gridTick(m, mid);
    const step = Math.max(1, Math.round((mid * STEP_FRACTION) / tick)) * tick;
    const inner = side === 'buy' ? Math.floor(mid / step - 1e-9) * step : Math.ceil(mid / step + 1e-9) * step;
    return Array.from({ length: LEVELS }, (_, k) => gridPrice(m, side === 'buy' ? inner - k * step : inner + k * step, side === 'sell'));
  }

  /** Brings one market's ladder to `mid`: cancels what left it, then fills the levels the book lacks. */
  async refresh(m: MarketInfo, mid: number): Promise<void> {
    if (this.busy.has(m.symbol)) return; // the previous refresh of this market is still under way
    this.busy.add(m.symbol);
    try {
      const book = await call(this.pool, 'GET', `/v1/orderbook?depth=${LEVELS * 4}&market=${encodeURIComponent(m.symbol)}`, undefined, {});
      for (const side of ['buy', 'sell'] as const) {
        const wanted = new Set(MarketMaker.ladder(m, mid, side));
        const mine = this.side(m.symbol, side);
        // Cancels first: a level left behind by the mid may sit across the new ladder of the other side.
        for (const [price, ids] of mine) {
          if (wanted.has(price)) continue;
          mine.delete(price);
          for (const id of ids) this.record(await this.bot.cancel(id));
        }
      }
      for (const side of ['buy', 'sell'] as const) {
        const levels = (side === 'buy' ? book.body?.bids : book.body?.asks) as string[][] | undefined;
        const shown = new Map((levels ?? []).map(([p, s]) => [Number(p), Number(s)]));
        const mine = this.side(m.symbol, side);
        for (const price of MarketMaker.ladder(m, mid, side)) {
          const size = gridSize(m, Number(price), LEVEL_NOTIONAL);
          // Half a level or less left (taken, or never placed): top it up.
          if ((shown.get(Number(price)) ?? 0) > Number(size) / 2) continue;
          const r = await this.bot.placeOrder({ market: m.symbol, side, type: 'limit', tif: 'gtc', price, size });
          this.record(r);
          if (r.body?.ok === true && (r.body.status === 'open' || r.body.status === 'partially_filled')) {
            mine.set(price, [...(mine.get(price) ?? []), String(r.body.orderId)]);
          }
        }
      }
    } finally {
      this.busy.delete(m.symbol);
    }
  }

  private side(market: string, side: Side): Map<string, string[]> {
    const key = `${market}/${side}`;
    let map = this.orders.get(key);
    if (!map) this.orders.set(key, (map = new Map()));
    return map;
  }
}
