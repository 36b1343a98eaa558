// The order book kept from events equals the reference engine's own book after every request of
// a busy run (makers, takers crossing several levels, IOC and market orders, post-only, reduce-only,
// cancels, TP/SL triggers firing reduce-only orders, position flips): compared at every seq the
// engine can be observed at, on both sides at full depth, and once more by replaying the whole
// history from its JSON into a fresh book.
import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../sandbox/engine/core.js';
import { Random } from '../../../sandbox/simulator/random.js';
import { formatDecimal, parseDecimal } from '../../../src/decimal.js';
import { MarketBook } from '../../../src/projections/order-book.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';

const MARKETS: readonly string[] = ['BTC-PERP', 'ETH-PERP'];
const MID: Record<string, number> = { 'BTC-PERP': 65000, 'ETH-PERP': 3200 };
const PARTIES = Array.from({ length: 8 }, (_, i) => `bot${i}::${(i + 1).toString(16).padStart(64, '0')}`);

function levelsOf(book: MarketBook, side: 'buy' | 'sell'): Array<[string, string]> {
  return [...book.side(side).view()].map((l) => [formatDecimal(l.price), formatDecimal(l.size)]);
}

function engineLevels(core: EngineCore, market: string): { seq: number; bids: Array<[string, string]>; asks: Array<[string, string]> } {
  const answer = core.orderbook(market, 1_000_000).body as { seq: number; bids: Array<[string, string]>; asks: Array<[string, string]> };
  return answer;
}

/** One random action of a busy market, on the engine's grid. */
function act(core: EngineCore, rng: Random, open: Map<string, string[]>): void {
  const party = rng.pick(PARTIES);
  const market = rng.pick(MARKETS);
  const step = market === 'BTC-PERP' ? 5 : 0.5;
  const price = (offset: number): string => String(Math.round((MID[market]! + offset) / step) * step);
  const size = market === 'BTC-PERP' ? (0.001 * (1 + rng.int(20))).toFixed(3) : (0.01 * (1 + rng.int(30))).toFixed(2);
  const r = rng.next();
  let answer: { ok: boolean; orderId?: string; status?: string } | undefined;
  if (r < 0.45) {
    const side = rng.chance(0.5) ? 'buy' : 'sell';
    const off = (side === 'buy' ? -1 : 1) * step * (1 + rng.int(12));
    answer = core.placeOrder(party, { market, side, type: 'limit', size, price: price(off), tif: rng.chance(0.1) ? 'alo' : 'gtc' });
  } else if (r < 0.6) {
    // A limit taker that crosses several levels and may rest its remainder.
    const side = rng.chance(0.5) ? 'buy' : 'sell';
    const off = (side === 'buy' ? 1 : -1) * step * rng.int(8);
    const tif = rng.chance(0.3) ? 'ioc' : 'gtc';
    const withTpsl = rng.chance(0.2);
    answer = core.placeOrder(party, {
      market,
      side,
      type: 'limit',
      size: market === 'BTC-PERP' ? '0.050' : '1.00',
      price: price(off),
      tif,
      ...(withTpsl ? { tp: { triggerPrice: price(side === 'buy' ? step * 3 : -step * 3) }, sl: { triggerPrice: price(side === 'buy' ? -step * 3 : step * 3), limitPrice: price(side === 'buy' ? -step * 6 : step * 6) } } : {}),
    });
  } else if (r < 0.7) {
    answer = core.placeOrder(party, { market, side: rng.chance(0.5) ? 'buy' : 'sell', type: 'market', size });
  } else if (r < 0.75) {
    const side = rng.chance(0.5) ? 'buy' : 'sell';
    answer = core.placeOrder(party, { market, side, type: 'limit', size, price: price(side === 'buy' ? step * 2 : -step * 2), reduceOnly: true });
  } else if (r < 0.8) {
    core.setTpsl(party, { market, tp: { triggerPrice: price(step * (rng.int(5) - 2)) }, sl: { triggerPrice: price(step * (rng.int(5) - 2)) } });
  } else {
    const ids = open.get(party) ?? [];
    const id = ids.splice(rng.int(Math.max(1, ids.length)), 1)[0];
    if (id) core.cancelOrder(party, id);
    return;
  }
  if (answer?.ok && answer.orderId && (answer.status === 'open' || answer.status === 'partially_filled')) {
    const ids = open.get(party) ?? [];
    ids.push(answer.orderId);
    open.set(party, ids);
  }
  // Mid prices wander so makers and takers meet at new levels.
  MID[market] = MID[market]! + (rng.next() - 0.5) * step * 4;
}

describe('order book kept from events (reference engine replay)', () => {
  it('equals the engine book at every seq of a busy run, and on a replay of the whole history', () => {
    const core = new EngineCore();
    for (const p of PARTIES) core.deposit({ party: p, amount: '10000000' }, 'faucet');
    const live = new Map(MARKETS.map((m) => [m, new MarketBook(m)]));
    const history: string[] = [];
    const crossed: number[] = [];
    core.log.subscribe((event, json) => {
      history.push(json);
      const e = event as unknown as EngineEvent;
      if (!e.market || !live.has(e.market)) return;
      const book = live.get(e.market)!;
      book.apply(e);
      // Between requests too, a frame never shows a crossed book (a taker joins only once it stops crossing).
      const bid = book.bids.best();
      const ask = book.asks.best();
      if (bid !== undefined && ask !== undefined && bid >= ask) crossed.push(e.seq);
    });
    const rng = new Random(21);
    const open = new Map<string, string[]>();
    let compared = 0;
    let fills = 0;
    let triggerOrders = 0;
    const checkAll = (): void => {
      for (const m of MARKETS) {
        const engine = engineLevels(core, m);
        const book = live.get(m)!;
        const ours = { seq: book.seq, bids: levelsOf(book, 'buy'), asks: levelsOf(book, 'sell') };
        if (ours.seq !== engine.seq || JSON.stringify(ours.bids) !== JSON.stringify(engine.bids) || JSON.stringify(ours.asks) !== JSON.stringify(engine.asks)) {
          expect({ atSeq: core.log.maxSeq, market: m, ...ours }).toEqual({ atSeq: core.log.maxSeq, market: m, ...engine });
        }
        compared++;
      }
    };
    let lastSeq = 0;
    for (let i = 0; i < 6000; i++) {
      act(core, rng, open);
      // Every request is one synchronous step of the engine: after it, every seq it emitted is observable.
      if (core.log.maxSeq !== lastSeq) {
        lastSeq = core.log.maxSeq;
        checkAll();
      }
    }
    for (const json of history) {
      const e = JSON.parse(json) as EngineEvent;
      if (e.kind === 'engine.order_filled') fills++;
      if (e.kind === 'engine.trigger_fired') triggerOrders++;
    }
    expect(crossed).toEqual([]);
    // A busy run: many matches and trigger orders, books many levels deep.
    expect(fills).toBeGreaterThan(1500);
    expect(triggerOrders).toBeGreaterThan(20);
    expect(compared).toBeGreaterThan(8000);
    expect(levelsOf(live.get('BTC-PERP')!, 'buy').length + levelsOf(live.get('BTC-PERP')!, 'sell').length).toBeGreaterThan(10);

    // The same history replayed from its JSON (as the SSE carries it) into fresh books.
    const replayed = new Map(MARKETS.map((m) => [m, new MarketBook(m)]));
    for (const json of history) {
      const e = JSON.parse(json) as EngineEvent;
      if (e.market && replayed.has(e.market)) replayed.get(e.market)!.apply(e);
    }
    for (const m of MARKETS) {
      const engine = engineLevels(core, m);
      expect({ seq: replayed.get(m)!.seq, bids: levelsOf(replayed.get(m)!, 'buy'), asks: levelsOf(replayed.get(m)!, 'sell') }).toEqual({
        seq: engine.seq,
        bids: engine.bids,
        asks: engine.asks,
      });
    }
  });

  it('a book seeded from the orders a mirror holds at any seq (inside a request too) equals the one kept from seq 1 at every later seq', () => {
    const core = new EngineCore();
    for (const p of PARTIES) core.deposit({ party: p, amount: '10000000' }, 'faucet');
    const history: EngineEvent[] = [];
    core.log.subscribe((_e, json) => void history.push(JSON.parse(json) as EngineEvent));
    const rng = new Random(7);
    const open = new Map<string, string[]>();
    for (let i = 0; i < 3000; i++) act(core, rng, open);

    // The mirror's `orders` as the indexer projects them from the events (status, size, filled size).
    interface Row { market: string; side: 'buy' | 'sell'; type: string; tif: string; price: string; size: bigint; filled: bigint; status: string; created: number }
    const mirrorAt = (seq: number): Map<string, Row> => {
      const rows = new Map<string, Row>();
      for (const e of history) {
        if (e.seq > seq) break;
        const p = e.payload as Record<string, any>;
        if (e.kind === 'engine.order_placed') {
          const o = p.order;
          rows.set(o.orderId, { market: o.market, side: o.side, type: o.type, tif: o.tif, price: o.price, size: parseDecimal(o.size), filled: parseDecimal(o.filledSize), status: o.status, created: e.seq });
        } else if (e.kind === 'engine.order_filled') {
          for (const id of [p.takerOrderId, p.makerOrderId]) {
            const r = rows.get(id)!;
            r.filled += parseDecimal(p.size);
            r.status = r.filled >= r.size ? 'filled' : 'partially_filled';
          }
        } else if (e.kind === 'engine.order_cancelled') rows.get(p.orderId)!.status = 'cancelled';
      }
      return rows;
    };
    const view = (b: MarketBook) => JSON.stringify([[...b.side('buy').view()], [...b.side('sell').view()]], (_k, v) => (typeof v === 'bigint' ? String(v) : v));

    const bookEvents = history.filter((e) => e.kind === 'engine.order_placed' || e.kind === 'engine.order_filled' || e.kind === 'engine.order_cancelled');
    let seeds = 0;
    let insideRequest = 0;
    let compared = 0;
    for (let n = 0; n < 40; n++) {
      // Any seq: after a placement whose matches follow, between two fills of one taker, after a cancel...
      const at = bookEvents[50 + rng.int(bookEvents.length - 400)]!.seq;
      const next = history.find((e) => e.seq === at + 1);
      if (next?.kind === 'engine.order_filled') insideRequest++;
      const rows = mirrorAt(at);
      for (const m of MARKETS) {
        const seeded = new MarketBook(m);
        seeded.seedOrders(
          [...rows.entries()]
            .filter(([, r]) => r.market === m && r.type === 'limit' && r.tif !== 'ioc' && (r.status === 'open' || r.status === 'partially_filled'))
            .sort(([, a], [, b]) => a.created - b.created)
            .map(([orderId, r]) => ({ orderId, side: r.side, price: r.price, remaining: formatDecimal(r.size - r.filled) })),
          at,
        );
        seeds++;
        const kept = new MarketBook(m);
        for (const e of history) {
          if (e.market !== m) continue;
          kept.apply(e);
          if (e.seq > at) seeded.apply(e);
          if (e.seq < at) continue;
          if (view(seeded) !== view(kept)) expect({ seededAt: at, seq: e.seq, book: view(seeded) }).toEqual({ seededAt: at, seq: e.seq, book: view(kept) });
          if (seeded.seq !== 0 && seeded.seq !== kept.seq) expect({ seededAt: at, seq: seeded.seq }).toEqual({ seededAt: at, seq: kept.seq });
          compared++;
          if (e.seq > at + 300) break;
        }
      }
    }
    expect(seeds).toBe(80);
    expect(insideRequest).toBeGreaterThan(3);
    expect(compared).toBeGreaterThan(10_000);
  });
});
