// The reference engine follows the published arithmetic (docs/engine.md "Arithmetic"): over random
// order flow (three parties, three markets with different grids, limit/market/ioc/reduce-only
// orders, self-trades, flips through zero, deposits and withdrawals), every leg of every fill, every
// deposit and every approved withdrawal is recomputed by the client's ledger (an implementation of
// the written rules that shares no code with the engine) and must equal the engine's claim, and the
// replayed balances and positions must equal the engine's own state at the end.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../sandbox/engine/core.js';
import { formatDec, parseDec } from '../../../sandbox/engine/decimal.js';
import { Ledger } from '../../../packages/client/src/verify/ledger.js';
import { holdersOf } from '../../../packages/client/src/verify/scheme.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const PARTIES = ['a', 'b', 'c'].map((h, i) => `${h}::${String(i + 1).repeat(64)}`);

// Prices near a level with as many decimals as the grid allows (at most 5 significant figures
// unless an integer), sizes on each market's step: averages and PnL need rounding.
const MARKETS = [
  { symbol: 'BTC-PERP', size: (n: number) => (n / 10_000).toFixed(4), price: (n: number) => String(60_000 + n) },
  { symbol: 'ETH-PERP', size: (n: number) => (n / 1000).toFixed(3), price: (n: number) => (2_000 + n / 10).toFixed(1) },
  { symbol: 'SOL-PERP', size: (n: number) => (n / 10).toFixed(2), price: (n: number) => (30 + n / 1000).toFixed(3) },
];

const action = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      t: fc.constant('order' as const),
      party: fc.integer({ min: 0, max: 2 }),
      market: fc.integer({ min: 0, max: 2 }),
      side: fc.constantFrom('buy' as const, 'sell' as const),
      type: fc.constantFrom('limit', 'limit', 'limit', 'market'),
      tif: fc.constantFrom('gtc', 'gtc', 'ioc'),
      reduceOnly: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
      // Sizes of 1..3000 steps (SOL: tenths), prices within 200 ticks of the level.
      size: fc.integer({ min: 1, max: 3000 }),
      price: fc.integer({ min: -200, max: 200 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('deposit' as const), party: fc.integer({ min: 0, max: 2 }), amount: fc.integer({ min: 1, max: 10_000_000 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('withdraw' as const), party: fc.integer({ min: 0, max: 2 }), amount: fc.integer({ min: 1, max: 5_000_000 }) }) },
);

type Action = typeof action extends fc.Arbitrary<infer T> ? T : never;

function run(actions: Action[]): EngineCore {
  const engine = new EngineCore();
  for (const p of PARTIES) engine.deposit({ party: p, amount: '1000000' }, 'faucet');
  for (const a of actions) {
    const party = PARTIES[a.party]!;
    if (a.t === 'deposit') engine.deposit({ party, amount: (a.amount / 1000).toFixed(3), txId: `tx-${a.amount}` }, 'chain');
    else if (a.t === 'withdraw') {
      engine.requestWithdrawal(party, { amount: (a.amount / 100).toFixed(2) });
      engine.tick();
    } else {
      const m = MARKETS[a.market]!;
      engine.placeOrder(party, {
        market: m.symbol,
        side: a.side,
        type: a.type,
        size: m.size(a.size),
        ...(a.type === 'limit' ? { price: m.price(a.price), tif: a.tif } : {}),
        ...(a.reduceOnly ? { reduceOnly: true } : {}),
      });
    }
  }
  return engine;
}

/** Every party's events replayed by the rules; returns the ledgers. */
function replay(engine: EngineCore): Map<string, Ledger> {
  const ledgers = new Map(PARTIES.map((p) => [p, new Ledger(p)]));
  for (const e of engine.log.eventsSince(0)) {
    for (const party of holdersOf(e as never)) ledgers.get(party)?.apply(e as never);
  }
  return ledgers;
}

describe('the reference engine follows the published arithmetic', () => {
  it('every leg, deposit and withdrawal of random order flow equals its recomputation (property)', () => {
    let legs = 0;
    let flips = 0;
    let selfTrades = 0;
    fc.assert(
      fc.property(fc.array(action, { minLength: 40, maxLength: 250 }), (actions) => {
        const engine = run(actions);
        const ledgers = replay(engine);
        for (const e of engine.log.eventsSince(0)) {
          if (e.kind !== 'engine.order_filled') continue;
          const ls = (e.payload as { legs: Array<{ party: string; role: string }> }).legs;
          if (ls.length > 2) flips++;
          if (ls.some((l) => l.role === 'taker' && ls.some((m) => m.role === 'maker' && m.party === l.party))) selfTrades++;
        }
        for (const [party, ledger] of ledgers) {
          expect(ledger.discrepancies, party).toEqual([]);
          legs += ledger.legs;
          // The replay ends where the engine is.
          expect(formatDec(ledger.balance)).toBe(formatDec(engine.accounts.balance(party)));
          const engineOpen = engine.accounts.openPositions(party).map((p) => [p.market, p.positionId, formatDec(p.size), formatDec(p.entryPrice), formatDec(p.realizedPnl)]);
          const mine = [...ledger.positions.values()].map((p) => [p.market, p.positionId, formatDec(p.size), formatDec(p.entryPrice), formatDec(p.realizedPnl)]);
          expect(mine.sort()).toEqual(engineOpen.sort());
        }
      }),
      { numRuns: 150 },
    );
    // The flow did reach the cases the rules single out.
    expect(legs).toBeGreaterThan(2000);
    expect(flips).toBeGreaterThan(20);
    expect(selfTrades).toBeGreaterThan(20);
  });
});

describe("docs/engine.md's worked example", () => {
  /** The table's rows: fee, size, entry, realized PnL, balance (the value after any `=`, spaces removed). */
  function table(): string[][] {
    const doc = readFileSync(join(ROOT, 'docs/engine.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### Arithmetic'), doc.indexOf('## Take-profit'));
    return section
      .split('\n')
      .filter((l) => /^\| (buy|sell) /.test(l))
      .map((l) => l.split('|').slice(2, 7).map((c) => c.split('=').at(-1)!.replace(/[\s ]/g, '').replace('−', '-')));
  }
  const n = (s: string) => formatDec(parseDec(s)!);

  it('is what the engine does, leg by leg', () => {
    const rows = table();
    expect(rows).toHaveLength(4);
    const engine = new EngineCore();
    const [a, m] = PARTIES as [string, string];
    for (const p of [a, m]) engine.deposit({ party: p, amount: '100000' }, 'faucet');
    const trade = (side: 'buy' | 'sell', size: string, price: string) => {
      engine.placeOrder(m, { market: 'BTC-PERP', side: side === 'buy' ? 'sell' : 'buy', type: 'limit', size, price });
      expect(engine.placeOrder(a, { market: 'BTC-PERP', side, type: 'limit', size, price, tif: 'ioc' })).toMatchObject({ ok: true, status: 'filled' });
    };
    trade('buy', '0.5', '60000');
    trade('buy', '0.1', '60001');
    trade('sell', '1', '59999');
    const legs = engine.log
      .eventsSince(0)
      .filter((e) => e.kind === 'engine.order_filled')
      .flatMap((e) => (e.payload as { legs: Array<Record<string, string>> }).legs.filter((l) => l.party === a));
    expect(legs.map((l) => [l.fee, l.positionSize, l.entryPrice, l.realizedPnl, l.newBalance])).toEqual(rows.map((r) => r.map(n)));
  });
});
