// startSimulator(): bots that keep the engine's markets alive at `rate` actions per second —
// a market maker keeping a ladder on both sides of every book around a random-walk mid (maker.ts),
// bots quoting around it on each market's grid, takers crossing with a bounded price, position
// flips, take-profit/stop-loss (attached to orders and via /v1/tpsl), cancels, deposits,
// withdrawals and faucet top-ups. Every trading call is signed like a real client's.
import { randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { admin, Bot, call } from './bot.js';
import { gridAbs, gridPrice, gridSize, gridTick, type MarketInfo } from './grid.js';
import { MarketMaker } from './maker.js';
import { Random } from './random.js';
import { keyPairFromSeed, partyId } from './signing.js';

export interface SimulatorOptions {
  engineUrl: string;
  adminToken: string;
  /** Actions (mostly orders) per second; default 20. */
  rate?: number;
  /** Number of bots (parties); default 8. */
  bots?: number;
  /** PRNG seed: the same seed gives the same parties and the same choices; default 1. */
  seed?: number;
  /** Collateral each bot gets from the faucet at start; default 1 000 000. */
  funding?: string;
  /** Most calls in flight at once; actions beyond it are dropped (counted). Default 32. */
  maxInFlight?: number;
  onError?: (err: Error) => void;
}

export interface SimulatorStats {
  actions: Record<string, number>;
  ok: number;
  rejected: Record<string, number>;
  errors: number;
  dropped: number;
}

export interface RunningSimulator {
  /** The bots' parties, then the market maker's. */
  parties: string[];
  stats(): SimulatorStats;
  stop(): Promise<void>;
}

/** The id of a chain transaction (unique across runs, which the seeded choices are not). */
const chainTxId = (): string => `0x${randomBytes(32).toString('hex')}`;

/** Where a market's mid starts when its book is empty. */
const REFERENCE_PRICES: Record<string, number> = { 'BTC-PERP': 65000, 'ETH-PERP': 3200, 'SOL-PERP': 150 };

/**
 * How far from the mid a taker of the simulator may trade (0.5 %): every order that takes is a limit
 * `ioc` at that bound (tighter for those sized by a position, NEAR_TICKS), and every
 * take-profit/stop-loss has a limit price, so none ever sweeps a book that happens to be thin.
 */
const TAKE_BOUND = 0.005;
/**
 * How many ticks past the mid an order sized by a position may trade: a flip (twice the position)
 * or a fired take-profit/stop-loss (the position or half of it) can be several of the maker's levels
 * large, and at TAKE_BOUND it took them all, printing a last trade (the mark) a dozen ticks inside
 * a book the maker had already rebuilt. What is left past this bound is not filled (a flip is IOC)
 * or rests there (a fired trigger).
 */
const NEAR_TICKS = 6;
/** A market whose last take began longer ago than this holds its mid (the drift waits for trading). */
const DRIFT_HOLD_MS = 1_000;
/** How often the market maker brings each market's ladder to the mid. */
const MAKER_REFRESH_MS = 500;

type Action = 'make' | 'quote' | 'take' | 'take_tpsl' | 'flip' | 'tpsl' | 'cancel' | 'deposit' | 'withdraw' | 'faucet';
const WEIGHTS: Array<[Action, number]> = [
  ['quote', 46],
  ['take', 18],
  ['take_tpsl', 6],
  ['flip', 5],
  ['tpsl', 6],
  ['cancel', 12],
  ['deposit', 3],
  ['withdraw', 3],
  ['faucet', 1],
];

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const url = new URL(options.engineUrl);
  const pool = new Pool(url.origin, { connections: 16, pipelining: 1 });
  const rng = new Random(options.seed ?? 1);
  const rate = options.rate ?? 20;
  const maxInFlight = options.maxInFlight ?? 32;
  const stats: SimulatorStats = { actions: {}, ok: 0, rejected: {}, errors: 0, dropped: 0 };

  const marketsAnswer = await call(pool, 'GET', '/v1/markets', undefined, {});
  const markets: MarketInfo[] = ((marketsAnswer.body?.markets ?? []) as Array<Record<string, unknown>>)
    .filter((m) => m.status === undefined || m.status === 'active')
    .map((m) => ({ symbol: String(m.symbol), szDecimals: Number(m.szDecimals), minNotional: Number(m.minNotional), maxLeverage: Number(m.maxLeverage) }));
  if (markets.length === 0) {
    await pool.close();
    throw new Error(`GET /v1/markets gave no active market (HTTP ${marketsAnswer.status})`);
  }
  const mid = new Map<string, number>();
  for (const m of markets) mid.set(m.symbol, await startingMid(pool, m));

  const bots = botSeeds(rng, options.bots ?? 8).map((b) => Bot.fromSeed(pool, b.hint, b.seed));
  const makerBot = Bot.fromSeed(pool, MAKER_HINT, makerSeed(options.seed ?? 1));
  for (const b of [...bots, makerBot]) {
    await b.authorize();
    const f = await admin(pool, options.adminToken, '/v1/admin/faucet', { party: b.party, amount: options.funding ?? '1000000' });
    if (f.body?.ok !== true) throw new Error(`faucet failed for ${b.hint}: HTTP ${f.status} ${JSON.stringify(f.body)}`);
  }

  const record = (action: Action, r: { status: number; body: Record<string, unknown> | null }): void => {
    stats.actions[action] = (stats.actions[action] ?? 0) + 1;
    if (r.body?.ok === true) stats.ok++;
    else {
      const code = String(r.body?.code ?? `http_${r.status}`);
      stats.rejected[code] = (stats.rejected[code] ?? 0) + 1;
    }
  };

  const maker = new MarketMaker(makerBot, pool, (r) => record('make', r));
  /** A bounded limit price for a taker on `side`: the mid moved TAKE_BOUND against it. */
  const bound = (m: MarketInfo, side: string, px: number): string => gridPrice(m, side === 'buy' ? px * (1 + TAKE_BOUND) : px * (1 - TAKE_BOUND), side === 'buy');
  /** A limit price NEAR_TICKS past `px` on `side` (what an order sized by a position may reach). */
  const near = (m: MarketInfo, side: 'buy' | 'sell', px: number): string => gridPrice(m, side === 'buy' ? px + NEAR_TICKS * gridTick(m, px) : px - NEAR_TICKS * gridTick(m, px), side === 'buy');
  /** A take-profit or stop-loss of a position (long: up = 1) triggered at `trigger`, closing at most NEAR_TICKS past it. */
  const exit = (m: MarketInfo, up: number, trigger: number): { triggerPrice: string; limitPrice: string } => {
    const triggerPrice = gridPrice(m, trigger);
    return { triggerPrice, limitPrice: near(m, up > 0 ? 'sell' : 'buy', Number(triggerPrice)) };
  };

  const quote = async (bot: Bot, m: MarketInfo): Promise<void> => {
    const px = mid.get(m.symbol)!;
    const side = rng.chance(0.5) ? 'buy' : 'sell';
    const offset = rng.between(0.0003, 0.004);
    const price = gridPrice(m, side === 'buy' ? px * (1 - offset) : px * (1 + offset), side === 'sell');
    const r = await bot.placeOrder({ market: m.symbol, side, type: 'limit', tif: 'gtc', price, size: gridSize(m, Number(price), rng.between(100, 2000)) });
    record('quote', r);
    if (r.body?.ok === true && (r.body.status === 'open' || r.body.status === 'partially_filled')) bot.resting.push(String(r.body.orderId));
    while (bot.resting.length > 12) {
      const id = bot.resting.shift()!;
      record('cancel', await bot.cancel(id));
    }
  };

  /**
   * When each market was last taken in (ms). A take goes to the market taken longest ago, so every
   * market trades about every third take (about twice a second at the defaults) instead of at
   * random: a market left without a trade for seconds kept its last trade (the mark) where the mid
   * had been while the maker's ladder followed the drifting mid away from it.
   */
  const takenAt = new Map<string, number>(markets.map((m) => [m.symbol, 0]));
  const stalest = (): MarketInfo => markets.reduce((a, b) => (takenAt.get(b.symbol)! < takenAt.get(a.symbol)! ? b : a));

  const take = async (bot: Bot, m: MarketInfo, withTpsl: boolean): Promise<void> => {
    takenAt.set(m.symbol, Date.now());
    const px = mid.get(m.symbol)!;
    const side = rng.chance(0.5) ? 'buy' : 'sell';
    const order: Record<string, unknown> = { market: m.symbol, side, type: 'limit', tif: 'ioc', price: bound(m, side, px), size: gridSize(m, px, rng.between(50, 800)) };
    if (withTpsl) {
      const up = side === 'buy' ? 1 : -1;
      order.tp = exit(m, up, px * (1 + up * 0.003));
      order.sl = exit(m, up, px * (1 - up * 0.003));
    }
    record(withTpsl ? 'take_tpsl' : 'take', await bot.placeOrder(order));
  };

  const flip = async (bot: Bot): Promise<void> => {
    const positions = (await bot.positions()).filter((p) => p.size !== 0);
    if (positions.length === 0) return take(bot, stalest(), false);
    const p = rng.pick(positions);
    const m = markets.find((x) => x.symbol === p.market);
    if (!m) return;
    const size = gridAbs(m, 2 * p.size);
    const side = p.size > 0 ? 'sell' : 'buy';
    record('flip', await bot.placeOrder({ market: m.symbol, side, type: 'limit', tif: 'ioc', price: near(m, side, mid.get(m.symbol)!), size }));
  };

  const tpsl = async (bot: Bot): Promise<void> => {
    const positions = (await bot.positions()).filter((p) => p.size !== 0);
    if (positions.length === 0) return;
    const p = rng.pick(positions);
    const m = markets.find((x) => x.symbol === p.market);
    if (!m) return;
    const px = mid.get(m.symbol)!;
    const up = p.size > 0 ? 1 : -1;
    const half = gridAbs(m, p.size / 2);
    const body: Record<string, unknown> = {
      market: m.symbol,
      tp: { ...exit(m, up, px * (1 + up * 0.002)), size: Number(half) > 0 && rng.chance(0.5) ? half : undefined },
      sl: rng.chance(0.8) ? exit(m, up, px * (1 - up * 0.002)) : null,
    };
    record('tpsl', await bot.tpsl(body));
  };

  const act = async (): Promise<void> => {
    const bot = rng.pick(bots);
    const m = rng.pick(markets);
    let roll = rng.next() * WEIGHTS.reduce((s, [, w]) => s + w, 0);
    let action: Action = 'quote';
    for (const [a, w] of WEIGHTS) {
      roll -= w;
      if (roll < 0) {
        action = a;
        break;
      }
    }
    switch (action) {
      case 'quote':
        return quote(bot, m);
      case 'take':
        return take(bot, stalest(), false);
      case 'take_tpsl':
        return take(bot, stalest(), true);
      case 'flip':
        return flip(bot);
      case 'tpsl':
        return tpsl(bot);
      case 'cancel': {
        const id = bot.resting.shift();
        if (id) record('cancel', await bot.cancel(id));
        return;
      }
      case 'deposit':
        // A chain deposit names the chain transaction it comes from (engine contract: the engine
        // commits that id, the on-chain projection records it, the trader matches the two).
        return record('deposit', await admin(pool, options.adminToken, '/v1/admin/deposit', { party: bot.party, amount: String(rng.int(900) + 100), txId: chainTxId() }));
      case 'withdraw':
        return record('withdraw', await bot.withdraw(String(rng.int(90) + 10)));
      case 'faucet':
        return record('faucet', await admin(pool, options.adminToken, '/v1/admin/faucet', { party: bot.party, amount: '1000' }));
    }
  };

  // Both sides of every book before the first taker.
  for (const m of markets) await maker.refresh(m, mid.get(m.symbol)!);

  let inFlight = 0;
  let budget = 0;
  let last = Date.now();
  let stopped = false;
  const running = new Set<Promise<void>>();
  const pump = setInterval(() => {
    const now = Date.now();
    budget = Math.min(budget + ((now - last) / 1000) * rate, rate); // never bursts more than 1 s of work
    last = now;
    while (budget >= 1 && !stopped) {
      budget -= 1;
      if (inFlight >= maxInFlight) {
        stats.dropped++;
        continue;
      }
      inFlight++;
      const p: Promise<void> = act()
        .catch((err: Error) => {
          stats.errors++;
          options.onError?.(err);
        })
        .finally(() => {
          inFlight--;
          running.delete(p);
        });
      running.add(p);
    }
  }, 20);
  // The mid drifts as a random walk (about 0.004 % per second, a calm day's pace) so prices keep moving.
  // A market not taken in for DRIFT_HOLD_MS holds its mid until it is: on a loaded machine the
  // simulator's actions run late while this timer does not, and the ladder followed the walking mid
  // away from the last trade (the mark) with no trade to bring the mark along (a CI run saw BTC's
  // best prices 10-12 ticks from it).
  const drift = setInterval(() => {
    const now = Date.now();
    for (const m of markets) {
      if (now - takenAt.get(m.symbol)! > DRIFT_HOLD_MS) continue;
      mid.set(m.symbol, mid.get(m.symbol)! * Math.exp(rng.normal() * 0.00002));
    }
  }, 250);
  const making = setInterval(() => {
    for (const m of markets) {
      const p: Promise<void> = maker.refresh(m, mid.get(m.symbol)!).catch((err: Error) => {
        stats.errors++;
        options.onError?.(err);
      }).finally(() => running.delete(p));
      running.add(p);
    }
  }, MAKER_REFRESH_MS);

  return {
    parties: [...bots.map((b) => b.party), maker.party],
    stats: () => structuredClone(stats),
    async stop() {
      stopped = true;
      clearInterval(pump);
      clearInterval(drift);
      clearInterval(making);
      await Promise.allSettled([...running]);
      await pool.close();
    },
  };
}

/** Bot hints and key seeds, drawn first from the run's PRNG: a seed always yields the same parties. */
function botSeeds(rng: Random, n: number): Array<{ hint: string; seed: Buffer }> {
  return Array.from({ length: n }, (_, i) => ({ hint: `bot-${i + 1}`, seed: rng.bytes(32) }));
}

const MAKER_HINT = 'maker-1';

/** The market maker's key seed: drawn from its own PRNG, so the bots' parties and choices stay those of the seed. */
function makerSeed(seed: number): Buffer {
  return new Random(seed ^ 0x6d616b72).bytes(32);
}

/** The market maker's party in a simulator run with this seed. */
export function makerParty(seed: number): string {
  return partyId(MAKER_HINT, keyPairFromSeed(makerSeed(seed)));
}

/** The party ids a simulator run with this seed uses (for docs, banners and tests). */
export function botParties(seed: number, n: number): string[] {
  return botSeeds(new Random(seed), n).map((b) => partyId(b.hint, keyPairFromSeed(b.seed)));
}

/** The current book's mid when it has both sides, else a reference price. */
async function startingMid(pool: Pool, m: MarketInfo): Promise<number> {
  const r = await call(pool, 'GET', `/v1/orderbook?depth=1&market=${encodeURIComponent(m.symbol)}`, undefined, {});
  const bid = Number((r.body?.bids as string[][] | undefined)?.[0]?.[0]);
  const ask = Number((r.body?.asks as string[][] | undefined)?.[0]?.[0]);
  if (bid > 0 && ask > 0) return (bid + ask) / 2;
  return REFERENCE_PRICES[m.symbol] ?? 100;
}

/** Each party of a simulator run with this seed and its 32-byte key seed (hex): `localParty(hint, seedHex)` acts as it. */
export function simulatedKeys(seed: number, n: number): Array<{ hint: string; seedHex: string; party: string }> {
  const keys = botSeeds(new Random(seed), n).map((b) => ({ hint: b.hint, seedHex: b.seed.toString('hex'), party: partyId(b.hint, keyPairFromSeed(b.seed)) }));
  const maker = makerSeed(seed);
  return [...keys, { hint: MAKER_HINT, seedHex: maker.toString('hex'), party: makerParty(seed) }];
}
