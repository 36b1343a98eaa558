// The market list a front end trades on: the engine's markets (symbols, grid rules, status) with
// 24 h statistics from the mirror's fills.
//
// Sources and caching:
// - The engine's `GET /v1/markets` is the truth for which markets exist and their rules; it is read
//   at most once per MARKET_LIST_TTL_MS (rules change rarely). When the engine cannot answer
//   (down, slow, garbage), the indexer's `markets` table is used instead, so the list survives an
//   engine outage.
// - Statistics of every market over the last 24 h of fills are refreshed at most once per
//   STATS_TTL_MS and shared by every request in between; a refresh reads only what changed
//   (rolling-stats.ts).
// The 24 h window is measured on the gateway clock: [now − 24 h, now].
import type { Database } from '../db/database.js';
import type { EngineClient } from '../engine/client.js';
import { listMarketRows } from '../db/queries/markets.js';
import { lastTrades, type LastTradeRow } from '../db/queries/trades.js';
import { openInterestRows, type OpenInterestRow } from '../db/queries/open-interest.js';
import { RollingStats, roundQuote, WINDOW_MS, type WindowStats } from './rolling-stats.js';
import { formatDecimal, isDecimal, normalizeDecimal, SCALE, ZERO } from '../decimal.js';
import { TtlCache } from './ttl-cache.js';
import { systemClock, type Clock } from '../contracts/clock.js';

export const MARKET_LIST_TTL_MS = 5_000;
export const STATS_TTL_MS = 1_000;
export const STATS_WINDOW_MS = WINDOW_MS;
/** How long the engine gets to list its markets before the mirror's table is used. */
const ENGINE_LIST_TIMEOUT_MS = 2_000;

export interface MarketRules {
  symbol: string;
  status: string;
  szDecimals: number;
  minNotional: string;
  maxLeverage: number;
}

export interface Stats24h {
  open: string | null;
  high: string | null;
  low: string | null;
  last: string | null;
  change: string | null;
  changePct: string | null;
  baseVolume: string;
  quoteVolume: string;
  trades: number;
  asOfSeq: number | null;
}

/** The market's latest match whatever its age (the 24 h figures say nothing of a quiet market). */
export interface LastTrade {
  price: string;
  seq: number;
  at: string;
}

export interface Market extends MarketRules {
  sizeStep: string;
  priceSigFigs: number;
  maxPriceDecimals: number;
  lastTrade: LastTrade | null;
  stats24h: Stats24h;
  /** Σ size of the open long epochs (= Σ |size| of the short ones), base units. */
  openInterest: string;
}

/** The engine's grid (docs/engine.md "Orders and matching"): prices have at most 5 significant figures and 6 − szDecimals decimals. */
export const PRICE_SIG_FIGS = 5;

function rulesFromEngine(body: unknown): MarketRules[] {
  const list = (body as { markets?: unknown } | null)?.markets;
  if (!Array.isArray(list)) throw new Error('engine /v1/markets: no markets array');
  return list.map((m: Record<string, unknown>) => {
    const { symbol, status, szDecimals, minNotional, maxLeverage } = m ?? {};
    if (typeof symbol !== 'string' || !Number.isInteger(szDecimals) || (szDecimals as number) < 0 || (szDecimals as number) > 10) {
      throw new Error('engine /v1/markets: malformed market');
    }
    const notional = typeof minNotional === 'number' ? String(minNotional) : minNotional;
    if (!isDecimal(notional) || !Number.isInteger(maxLeverage)) throw new Error(`engine /v1/markets: malformed market ${symbol}`);
    return {
      symbol,
      status: typeof status === 'string' ? status : 'active',
      szDecimals: szDecimals as number,
      minNotional: normalizeDecimal(notional),
      maxLeverage: maxLeverage as number,
    };
  });
}

/** Percent change with 10 places, rounded half away from zero. */
function percent(change: bigint, open: bigint): string {
  const scaled = change * 100n * SCALE;
  const q = scaled / open;
  const r = scaled % open;
  const away = 2n * (r < 0n ? -r : r) >= (open < 0n ? -open : open);
  return formatDecimal(away ? q + (scaled < 0n !== open < 0n ? -1n : 1n) : q);
}

export function statsOf(symbol: string, window: WindowStats): Stats24h {
  const s = window.byMarket.get(symbol);
  if (!s) {
    return { open: null, high: null, low: null, last: null, change: null, changePct: null, baseVolume: ZERO, quoteVolume: ZERO, trades: 0, asOfSeq: window.headSeq };
  }
  const change = s.last - s.open;
  return {
    open: formatDecimal(s.open),
    high: formatDecimal(s.high),
    low: formatDecimal(s.low),
    last: formatDecimal(s.last),
    change: formatDecimal(change),
    changePct: s.open === 0n ? null : percent(change, s.open),
    baseVolume: formatDecimal(s.base),
    quoteVolume: formatDecimal(roundQuote(s.quote20)),
    trades: s.trades,
    asOfSeq: window.headSeq,
  };
}

export function withRules(rules: MarketRules, stats: Stats24h, lastTrade: LastTrade | null = null, openInterest: string = ZERO): Market {
  return {
    symbol: rules.symbol,
    status: rules.status,
    szDecimals: rules.szDecimals,
    minNotional: rules.minNotional,
    maxLeverage: rules.maxLeverage,
    sizeStep: formatDecimal(SCALE / 10n ** BigInt(rules.szDecimals)),
    priceSigFigs: PRICE_SIG_FIGS,
    maxPriceDecimals: Math.max(0, 6 - rules.szDecimals),
    lastTrade,
    stats24h: stats,
    openInterest,
  };
}

const NO_STATS: WindowStats = { byMarket: new Map(), headSeq: null };

export class MarketCatalog {
  private readonly rules: TtlCache<MarketRules[]>;
  private readonly stats: TtlCache<WindowStats>;

  constructor(
    private readonly db: Database,
    private readonly engine: Pick<EngineClient, 'getJson'>,
    private readonly log: { warn(obj: object, msg: string): void },
    private readonly clock: Clock = systemClock,
  ) {
    this.rules = new TtlCache(() => this.loadRules(), MARKET_LIST_TTL_MS, clock);
    const rolling = new RollingStats();
    this.stats = new TtlCache(() => db.read(NO_STATS, (sql) => rolling.refresh(sql, this.clock.now())), STATS_TTL_MS, clock);
    this.openInterest = new TtlCache(
      async () => new Map((await db.read([] as OpenInterestRow[], (sql) => openInterestRows(sql))).map((r) => [r.market, normalizeDecimal(r.openInterest)])),
      STATS_TTL_MS,
      clock,
    );
  }
  /** Open interest per market, cached as the statistics are. */
  private readonly openInterest: TtlCache<Map<string, string>>;

  async list(): Promise<Market[]> {
    const [rules, stats, oi] = await Promise.all([this.rules.get(), this.stats.get(), this.openInterest.get()]);
    const last = await this.lastTrades(rules.map((r) => r.symbol));
    return rules.map((r) => withRules(r, statsOf(r.symbol, stats), last.get(r.symbol) ?? null, oi.get(r.symbol)));
  }

  /** The market, or null when neither the engine nor the mirror lists it. */
  async get(symbol: string): Promise<Market | null> {
    const rules = (await this.rules.get()).find((r) => r.symbol === symbol);
    if (!rules) return null;
    const last = await this.lastTrades([symbol]);
    return withRules(rules, statsOf(symbol, await this.stats.get()), last.get(symbol) ?? null, (await this.openInterest.get()).get(symbol));
  }

  /** Cached as the statistics are (STATS_TTL_MS): one indexed read per market. */
  private lastTradeCache: { at: number; key: string; value: Map<string, LastTrade> } | null = null;

  private async lastTrades(markets: string[]): Promise<Map<string, LastTrade>> {
    const key = markets.join(',');
    const cached = this.lastTradeCache;
    if (cached && cached.key === key && this.clock.now() - cached.at < STATS_TTL_MS) return cached.value;
    const rows = await this.db.read([] as LastTradeRow[], (sql) => lastTrades(sql, markets));
    const value = new Map(rows.map((r) => [r.market, { price: normalizeDecimal(r.price), seq: Number(r.seq), at: r.createdAt }]));
    this.lastTradeCache = { at: this.clock.now(), key, value };
    return value;
  }

  private async loadRules(): Promise<MarketRules[]> {
    try {
      return rulesFromEngine(await this.engine.getJson('/v1/markets', { timeoutMs: ENGINE_LIST_TIMEOUT_MS }));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'markets: the engine could not list its markets; using the mirror');
      const rows = await this.db.read([], (sql) => listMarketRows(sql));
      return rows.map((r) => ({ ...r, minNotional: normalizeDecimal(r.minNotional) }));
    }
  }
}
