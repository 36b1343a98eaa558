// The simulated market trades like a market: the simulator at the local stack's defaults (20
// actions/s, 8 bots) against the reference engine on a free port, its book sampled once a second
// for a minute. Every market has both sides a few ticks from the mark (the last trade), at least 10
// levels a side in 99 % of the samples, and no trade of the minute is more than 1 % from the marks
// sampled (a taker that swept a thin book would print far away, 0.7× the market in the report).
// Each sample's mark is the last trade at the book's own seq (from the engine's log), so a book and
// its mark are one instant of the engine, however late the test reads them on a busy machine.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { eventually } from '../../support/eventually.js';
import { DEFAULT_MARKETS } from '../../../sandbox/engine/markets.js';
import { gridTick } from '../../../sandbox/simulator/grid.js';
import { startSimulator } from '../../../sandbox/simulator/simulator.js';

/** "A few ticks": the most either best price may sit from the mark, in grid ticks. */
const FEW_TICKS = 10;
const SAMPLES = 60;
const markets = DEFAULT_MARKETS.map((m) => ({ symbol: m.symbol, szDecimals: m.szDecimals, minNotional: Number(m.minNotional), maxLeverage: m.maxLeverage }));

interface Sample {
  market: string;
  bids: number;
  asks: number;
  bestBid: number;
  bestAsk: number;
  mark: number;
  tick: number;
}

let engine: RunningEngine;
const file = fileScope();
beforeAll(async () => {
  engine = await testEngine(file, { tickMs: 50, commitMs: 500 });
});

describe('the simulated market (the stack\'s default rate and bots)', () => {
  it('keeps both sides of every book a few ticks from the mark, 10+ levels a side, and never sweeps', async () => {
    const sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken });
    const from = engine.engine.log.maxSeq;
    // The price of the market's last trade at or before `seq`, read from the engine's log.
    const marks = new Map<string, Array<[number, number]>>(markets.map((m) => [m.symbol, []]));
    let scanned = 0;
    const markAt = (market: string, seq: number): number => {
      for (const e of engine.engine.log.eventsSince(scanned)) {
        scanned = e.seq;
        if (e.kind === 'engine.order_filled') marks.get(e.market!)?.push([e.seq, Number(e.payload.price)]);
      }
      const list = marks.get(market)!;
      for (let i = list.length - 1; i >= 0; i--) if (list[i]![0] <= seq) return list[i]![1];
      return NaN;
    };
    const samples: Sample[] = [];
    try {
      // Warm-up: a first trade in every market (a mark to measure from).
      await eventually(() => markets.every((m) => engine.engine.lastPrice.has(m.symbol)), { timeoutMs: 30_000, everyMs: 200, what: 'a trade in every market' });
      for (let i = 0; i < SAMPLES; i++) {
        const tickAt = Date.now();
        for (const m of markets) {
          const book = (await (await fetch(`${engine.url}/v1/orderbook?market=${m.symbol}&depth=20`)).json()) as { seq: number; bids: string[][]; asks: string[][] };
          const mark = markAt(m.symbol, book.seq);
          samples.push({ market: m.symbol, bids: book.bids.length, asks: book.asks.length, bestBid: Number(book.bids[0]?.[0] ?? NaN), bestAsk: Number(book.asks[0]?.[0] ?? NaN), mark, tick: gridTick(m, mark) });
        }
        // Pacing: a sample a second.
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tickAt))));
      }
    } finally {
      await sim.stop();
    }
    const trades = engine.engine.log
      .eventsSince(from)
      .filter((e) => e.kind === 'engine.order_filled')
      .map((e) => ({ market: e.market!, price: Number((e.payload.legs as Array<{ price: string }>)[0]!.price) }));

    const offTicks = (s: Sample): number => Math.max((s.mark - s.bestBid) / s.tick, (s.bestAsk - s.mark) / s.tick);
    const worst = Object.fromEntries(markets.map((m) => [m.symbol, Math.max(...samples.filter((s) => s.market === m.symbol).map(offTicks))]));
    const thin = samples.filter((s) => s.bids < 10 || s.asks < 10);
    console.log(`[market] ${samples.length} samples; worst distance of a best price from the mark, in ticks: ${JSON.stringify(worst)}; ${thin.length} with fewer than 10 levels a side; ${trades.length} trades; stats ${JSON.stringify(sim.stats())}`);
    // Both sides, always, not crossed.
    expect(samples.filter((s) => !(s.bestBid > 0 && s.bestAsk > 0 && s.bestBid < s.bestAsk))).toEqual([]);
    // A few ticks from the mark, always.
    expect(samples.filter((s) => !(offTicks(s) <= FEW_TICKS))).toEqual([]);
    // 10 levels a side 99 % of the time.
    expect(thin.length).toBeLessThanOrEqual(Math.floor(samples.length * 0.01));
    // No sweep: every trade within 1 % of the marks sampled in its market.
    expect(trades.length).toBeGreaterThan(SAMPLES);
    for (const m of markets) {
      const marks = samples.filter((s) => s.market === m.symbol).map((s) => s.mark);
      const [lo, hi] = [Math.min(...marks) * 0.99, Math.max(...marks) * 1.01];
      expect(trades.filter((t) => t.market === m.symbol && (t.price < lo || t.price > hi))).toEqual([]);
    }
    expect(sim.stats().errors).toBe(0);
  }, 180_000);
});
