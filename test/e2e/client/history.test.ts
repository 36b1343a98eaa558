// A trader's history on the whole stack (engine → indexer → PostgreSQL → gateway): random trades
// between three parties in two markets, then, for each party, the PnL history and the trade history
// checked against each other and against the account view (a property test over seeded random
// sequences). Exact: every comparison is of 10-place decimal strings or their BigInt sums.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, localParty, type PartySigner, type PnlHistory, type TradeHistoryItem } from '../../../packages/client/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startTradingStack, type TradingStack } from '../../support/trading-stack.js';

const SCALE = 10_000_000_000n;
const units = (d: string): bigint => {
  const [i, f = ''] = d.replace('-', '').split('.');
  const v = BigInt(i!) * SCALE + BigInt(f.padEnd(10, '0'));
  return d.startsWith('-') ? -v : v;
};

/** A small seeded PRNG (mulberry32): the same seed, the same trades. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Trader {
  signer: PartySigner;
  client: GatewayClient;
}

describe('PnL history and trade history (whole stack, property)', () => {
  let db: TestDatabase;
  let stack: TradingStack;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startTradingStack(db.url);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await db?.drop();
  });

  async function trader(hint: string): Promise<Trader> {
    const t = { signer: await localParty(hint), client: new GatewayClient({ baseUrl: stack.gateway.url, retry: { retries: 0 } }) };
    expect((await t.client.createSession(t.signer)).ok).toBe(true);
    await t.client.faucet(t.signer.party);
    return t;
  }

  async function allTradeHistory(t: Trader): Promise<TradeHistoryItem[]> {
    const items: TradeHistoryItem[] = [];
    for (let before: number | undefined; ; ) {
      const page = await t.client.listUserTradeHistory(t.signer.party, { limit: 3, ...(before !== undefined ? { before } : {}) });
      items.push(...page.items);
      if (page.nextCursor === null) return items;
      before = page.nextCursor;
    }
  }

  for (const seed of [7, 2026]) {
    it(`seed ${seed}: the last PnL bucket equals the account view; PnL, fees and realized PnL agree with the trade history and the positions`, { timeout: 90_000 }, async () => {
      const random = prng(seed);
      const traders = [await trader(`a${seed}`), await trader(`b${seed}`), await trader(`c${seed}`)];
      // BTC prices stay inside the seed's resting book (59900 bid, 60100 ask) so each taker meets the maker it was paired with.
      const markets = [
        { symbol: 'BTC-PERP', price: () => String(59_910 + Math.floor(random() * 180)), size: () => (0.001 * (1 + Math.floor(random() * 20))).toFixed(3) },
        { symbol: 'ETH-PERP', price: () => (2_900 + Math.floor(random() * 2000) / 10).toFixed(1), size: () => (0.01 * (1 + Math.floor(random() * 30))).toFixed(2) },
      ];
      for (let i = 0; i < 14; i++) {
        const m = markets[Math.floor(random() * markets.length)]!;
        const a = Math.floor(random() * 3);
        const b = (a + 1 + Math.floor(random() * 2)) % 3;
        const side = random() < 0.5 ? 'buy' : 'sell';
        const price = m.price();
        const size = m.size();
        const rest = await traders[a]!.client.placeOrder({ market: m.symbol, side, type: 'limit', size, price });
        expect(rest.ok, JSON.stringify(rest)).toBe(true);
        const take = await traders[b]!.client.placeOrder({ market: m.symbol, side: side === 'buy' ? 'sell' : 'buy', type: 'limit', size, price, tif: 'ioc' });
        expect(take.ok, JSON.stringify(take)).toBe(true);
      }
      await stack.indexer.waitFor(stack.engine.engine.log.maxSeq, 15_000);

      const seen = { realized: false, unrealized: false, fees: false };
      for (const t of traders) {
        const party = t.signer.party;
        // The live account view and the mirror reach the same seq on their own schedules: compare once both have it.
        let history: PnlHistory | null = null;
        await expect
          .poll(
            async () => {
              const [h, account] = await Promise.all([t.client.getUserPnl(party, { interval: '1m' }), t.client.getAccount(party)]);
              history = h;
              const last = h.points.at(-1)!;
              return { collateral: last.collateral, unrealizedPnl: last.unrealizedPnl, equity: last.equity, fresh: account.asOfSeq <= h.asOfSeq };
            },
            { timeout: 10_000 },
          )
          .toEqual(await t.client.getAccount(party).then((a) => ({ collateral: a.collateral, unrealizedPnl: a.unrealizedPnl, equity: a.equity, fresh: true })));
        const points = history!.points;
        expect(points.length).toBeGreaterThan(0);
        for (const p of points) {
          expect(units(p.pnl)).toBe(units(p.cumulativeRealizedPnl) - units(p.cumulativeFees) + units(p.unrealizedPnl));
          expect(units(p.pnl)).toBe(units(p.equity) - units(p.netDeposits));
          expect(units(p.equity)).toBe(units(p.collateral) + units(p.unrealizedPnl));
        }
        const last = points.at(-1)!;
        expect(points.reduce((s, p) => s + units(p.realizedPnl), 0n)).toBe(units(last.cumulativeRealizedPnl));
        expect(points.reduce((s, p) => s + units(p.fees), 0n)).toBe(units(last.cumulativeFees));
        // One day bucket: the same totals.
        const day = (await t.client.getUserPnl(party, { interval: '1d' })).points.at(-1)!;
        expect({ ...day, ts: '' }).toEqual({ ...last, ts: '', realizedPnl: day.realizedPnl, fees: day.fees });

        const trades = await allTradeHistory(t);
        expect(trades.length).toBeGreaterThan(0);
        expect(new Set(trades.map((x) => `${x.seq}/${x.leg}`)).size).toBe(trades.length); // pages neither repeat nor split
        expect(trades.reduce((s, x) => s + units(x.realizedPnl), 0n)).toBe(units(last.cumulativeRealizedPnl));
        expect(trades.reduce((s, x) => s + units(x.fee), 0n)).toBe(units(last.cumulativeFees));
        expect(trades[0]!.cumulativeRealizedPnl).toBe(last.cumulativeRealizedPnl);
        expect(trades[0]!.cumulativeFees).toBe(last.cumulativeFees);
        // The running sums, oldest to newest (legs of one event in leg order).
        let run = 0n;
        for (const x of [...trades].sort((p, q) => p.seq - q.seq || p.leg - q.leg)) {
          run += units(x.realizedPnl);
          expect(units(x.cumulativeRealizedPnl)).toBe(run);
        }
        // Realized PnL is the epochs' own: Σ realizedPnl of every position epoch.
        const epochs = (await t.client.listUserPositions(party, { status: 'all', limit: 1000 })).items;
        expect(epochs.reduce((s, p) => s + units(p.realizedPnl), 0n)).toBe(units(last.cumulativeRealizedPnl));
        seen.realized ||= units(last.cumulativeRealizedPnl) !== 0n;
        seen.unrealized ||= units(last.unrealizedPnl) !== 0n;
        seen.fees ||= units(last.cumulativeFees) !== 0n;
      }
      // The sequence exercised every figure (not a history of zeros).
      expect(seen).toEqual({ realized: true, unrealized: true, fees: true });
    });
  }

  it('refuses a window of more than 1000 buckets and a reversed one with a 400, and gives an empty history for a party with nothing', async () => {
    const t = await trader('w');
    await expect(t.client.getUserPnl(t.signer.party, { interval: '1m', from: 0, to: 1000 * 60_000 })).rejects.toMatchObject({ status: 400, code: 'bad_request' });
    await expect(t.client.getUserPnl(t.signer.party, { interval: '1m', from: 120_000, to: 60_000 })).rejects.toMatchObject({ status: 400, code: 'bad_request' });
    const fresh = { signer: await localParty('nobody'), client: new GatewayClient({ baseUrl: stack.gateway.url, retry: { retries: 0 } }) };
    expect((await fresh.client.createSession(fresh.signer)).ok).toBe(true);
    const empty = await fresh.client.getUserPnl(fresh.signer.party);
    expect(empty.points.every((p) => p.equity === '0.0000000000' && p.pnl === '0.0000000000')).toBe(true);
    expect((await fresh.client.listUserTradeHistory(fresh.signer.party)).items).toEqual([]);
  });
});
