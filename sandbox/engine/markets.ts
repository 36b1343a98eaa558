/** Market definitions and the per-market order grid rules. */
import { SCALE, formatDec, parseDec } from './decimal.js';

export interface MarketSpec {
  symbol: string;
  szDecimals: number;
  minNotional: string;
  maxLeverage: number;
}

export interface Market extends MarketSpec {
  status: 'active';
  /** 10^-szDecimals in scaled units. */
  sizeStep: bigint;
  /** Maximum number of price decimals: 6 − szDecimals. */
  maxPriceDecimals: number;
  minNotionalScaled: bigint;
}

export const DEFAULT_MARKETS: MarketSpec[] = [
  { symbol: 'BTC-PERP', szDecimals: 4, minNotional: '10', maxLeverage: 20 },
  { symbol: 'ETH-PERP', szDecimals: 3, minNotional: '10', maxLeverage: 20 },
  { symbol: 'SOL-PERP', szDecimals: 2, minNotional: '10', maxLeverage: 10 },
];

/** `all` is reserved and can never name a market. */
export const RESERVED_MARKET = 'all';

export function buildMarket(spec: MarketSpec): Market {
  if (spec.symbol === RESERVED_MARKET) throw new Error('market symbol "all" is reserved');
  if (!Number.isInteger(spec.szDecimals) || spec.szDecimals < 0 || spec.szDecimals > 6) {
    throw new Error(`bad szDecimals for ${spec.symbol}`);
  }
  const minNotionalScaled = parseDec(spec.minNotional);
  if (minNotionalScaled === null || minNotionalScaled < 0n) throw new Error(`bad minNotional for ${spec.symbol}`);
  return {
    ...spec,
    status: 'active',
    sizeStep: SCALE / 10n ** BigInt(spec.szDecimals),
    maxPriceDecimals: 6 - spec.szDecimals,
    minNotionalScaled,
  };
}

export class MarketRegistry {
  private readonly bySymbol = new Map<string, Market>();
  readonly list: Market[];

  constructor(specs: MarketSpec[] = DEFAULT_MARKETS) {
    this.list = specs.map(buildMarket);
    for (const m of this.list) {
      if (this.bySymbol.has(m.symbol)) throw new Error(`duplicate market ${m.symbol}`);
      this.bySymbol.set(m.symbol, m);
    }
    if (this.list.length === 0) throw new Error('at least one market is required');
  }

  /** Exact, case-sensitive lookup. */
  get(symbol: string): Market | undefined {
    return this.bySymbol.get(symbol);
  }

  first(): Market {
    return this.list[0]!;
  }

  toWire(): Array<{ symbol: string; szDecimals: number; minNotional: string; maxLeverage: number; status: 'active' }> {
    return this.list.map((m) => ({
      symbol: m.symbol,
      szDecimals: m.szDecimals,
      minNotional: formatDec(m.minNotionalScaled),
      maxLeverage: m.maxLeverage,
      status: m.status,
    }));
  }
}

/** Size grid: positive and an exact multiple of 10^-szDecimals. */
export function sizeOnGrid(m: Market, size: bigint): boolean {
  return size > 0n && size % m.sizeStep === 0n;
}

/**
 * Price grid: positive; an integer price is always allowed; otherwise at most 5 significant
 * figures and at most 6 − szDecimals decimals.
 */
export function priceOnGrid(m: Market, price: bigint): boolean {
  if (price <= 0n) return false;
  if (price % SCALE === 0n) return true;
  const int = price / SCALE;
  const frac = (price % SCALE).toString().padStart(10, '0').replace(/0+$/, '');
  if (frac.length > m.maxPriceDecimals) return false;
  const digits = (int === 0n ? '' : int.toString()) + frac;
  const significant = digits.replace(/^0+/, '');
  return significant.length <= 5;
}
