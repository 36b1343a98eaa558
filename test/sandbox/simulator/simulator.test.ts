// The market simulator: its grid rounding agrees with the engine's grid checks, its signing is
// accepted by the engine, and a short run produces fills, flips, fired triggers, cancels,
// deposits and withdrawals, with no grid rejection.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { eventually } from '../../support/eventually.js';
import { buildMarket, DEFAULT_MARKETS, priceOnGrid, sizeOnGrid } from '../../../sandbox/engine/markets.js';
import { parseDec } from '../../../sandbox/engine/decimal.js';
import { Pool } from 'undici';
import { Bot } from '../../../sandbox/simulator/bot.js';
import { gridAbs, gridPrice, gridSize, onPriceGrid } from '../../../sandbox/simulator/grid.js';
import { keyPairFromSeed, partyId } from '../../../sandbox/simulator/signing.js';
import { botParties, makerParty, simulatedKeys, startSimulator } from '../../../sandbox/simulator/simulator.js';
import { localParty } from '../../../packages/client/src/index.js';

const infos = DEFAULT_MARKETS.map((m) => ({ symbol: m.symbol, szDecimals: m.szDecimals, minNotional: Number(m.minNotional), maxLeverage: m.maxLeverage }));

describe('simulator grid', () => {
  it('rounds to prices and sizes the engine accepts, for every market', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: infos.length - 1 }), fc.double({ min: 0.001, max: 2_000_000, noNaN: true }), fc.boolean(), (i, p, up) => {
        const info = infos[i]!;
        const engineMarket = buildMarket(DEFAULT_MARKETS[i]!);
        const price = gridPrice(info, p, up);
        expect(priceOnGrid(engineMarket, parseDec(price)!)).toBe(true);
        expect(onPriceGrid(info, price)).toBe(true);
        const size = gridSize(info, Number(price), 100);
        expect(sizeOnGrid(engineMarket, parseDec(size)!)).toBe(true);
        expect(Number(size) * Number(price)).toBeGreaterThanOrEqual(info.minNotional);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps known values exact', () => {
    const [btc, eth, sol] = infos;
    expect(gridPrice(btc!, 65012.87)).toBe('65012');
    expect(gridPrice(btc!, 65012.87, true)).toBe('65013');
    expect(gridPrice(eth!, 3201.55)).toBe('3201.5');
    expect(gridPrice(sol!, 150.129)).toBe('150.12');
    expect(gridPrice(sol!, 0.0123456)).toBe('0.0123');
    expect(gridSize(btc!, 65000, 100)).toBe('0.0016');
    expect(gridAbs(eth!, -0.0125)).toBe('0.013');
    expect(onPriceGrid(sol!, '150.123')).toBe(false);
    expect(onPriceGrid(eth!, '1234.56')).toBe(false);
  });
});

describe('acting as a simulated trader (docs/client.md)', () => {
  it('simulatedKeys gives each party its seed: localParty(hint, seedHex) is that party', async () => {
    const keys = simulatedKeys(1, 8);
    expect(keys.map((k) => k.party)).toEqual([...botParties(1, 8), makerParty(1)]);
    expect(keys[0]!.party).toBe('bot-1::8453dc67752ee82b16602c5fc19b48b0dea26662594284a86c9dec168def8dd1');
    for (const k of [keys[0]!, keys.at(-1)!]) expect((await localParty(k.hint, k.seedHex)).party).toBe(k.party);
  });
});

describe('simulator signing and run', () => {
  let engine: RunningEngine;
  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file, { tickMs: 50, commitMs: 500 });
  });

  it('derives the same party from the same seed, and the engine accepts its session and signed orders', async () => {
    const seed = Buffer.alloc(32, 7);
    expect(partyId('bot-x', keyPairFromSeed(seed))).toBe(partyId('bot-x', keyPairFromSeed(Buffer.alloc(32, 7))));
    // RFC 8032 test vector 1: this secret key has this public key.
    const rfc = keyPairFromSeed(Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex'));
    expect(rfc.publicKeyHex).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
    const pool = new Pool(engine.url);
    try {
      const bot = Bot.fromSeed(pool, 'bot-x', seed);
      await bot.authorize();
      await engine.engine.deposit({ party: bot.party, amount: '1000' }, 'faucet');
      const r = await bot.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', price: '3000', size: '0.01' });
      expect(r).toMatchObject({ status: 200, body: { ok: true, status: 'open' } });
      const c = await bot.cancel(String(r.body!.orderId));
      expect(c.body).toMatchObject({ ok: true, status: 'cancelled' });
      expect(await bot.positions()).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  it('keeps the markets alive: fills, flips, fired triggers, cancels, deposits, withdrawals', async () => {
    const from = engine.engine.log.maxSeq;
    const sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 150, bots: 6, seed: 11 });
    // What a live market must show; polled (not a fixed sleep) so a loaded machine only runs longer.
    const seen = () => {
      const events = engine.engine.log.eventsSince(from);
      const count = (kind: string) => events.filter((e) => e.kind === kind).length;
      return {
        fills: count('engine.order_filled') > 50,
        triggerSet: count('engine.trigger_set') > 0,
        triggerFired: count('engine.trigger_fired') > 0,
        approvedWithdrawal: count('engine.approve_submitted') > 0,
        userCancel: events.some((e) => e.kind === 'engine.order_cancelled' && e.payload.reason === 'user'),
        chainDeposit: events.some((e) => e.kind === 'inbound.deposit' && e.payload.source === 'chain'),
        // A flip: one fill event with a closing leg (position to zero) then an opening leg of the same party.
        flip: events.some((e) => {
          if (e.kind !== 'engine.order_filled') return false;
          const legs = e.payload.legs as Array<{ party: string; positionSize: string; positionId: string }>;
          return legs.some((l, i) => Number(l.positionSize) === 0 && legs[i + 1]?.party === l.party && legs[i + 1]!.positionId !== l.positionId);
        }),
      };
    };
    const all = { fills: true, triggerSet: true, triggerFired: true, approvedWithdrawal: true, userCancel: true, chainDeposit: true, flip: true };
    // Past 20 s the expect below names what was not seen.
    await eventually(() => Object.values(seen()).every(Boolean), { timeoutMs: 20_000, everyMs: 250 }).catch(() => undefined);
    await sim.stop();
    expect(seen()).toEqual(all);
    const stats = sim.stats();
    expect(sim.parties).toHaveLength(7); // 6 bots and the market maker
    expect(new Set(sim.parties).size).toBe(7);
    expect(stats.errors).toBe(0);
    for (const code of ['invalid_price', 'invalid_size', 'invalid_signature', 'http_401', 'http_400']) expect(stats.rejected[code]).toBeUndefined();
  }, 40_000);
});
