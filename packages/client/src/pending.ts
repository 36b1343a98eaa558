// Wire types of the protocol additions agreed for this round (docs/stream.md, docs/rest.md) whose
// gateway schemas are not on this branch yet. Once they are, these move into the generated file
// (generated/wire.ts) and this file shrinks to re-exports.
export type CandleInterval = '1m' | '5m' | '15m' | '1h' | '4h' | '1d';

export interface MarketStats {
  open: string | null;
  high: string | null;
  low: string | null;
  last: string | null;
  change: string | null;
  /** Percent, 10 places, or null without a trade in the last 24 h. */
  changePct: string | null;
  baseVolume: string;
  quoteVolume: string;
  trades: number;
  asOfSeq: number | null;
}

export interface Market {
  symbol: string;
  status: string;
  szDecimals: number;
  minNotional: string;
  maxLeverage: number;
  /** 10^-szDecimals as a decimal string. */
  sizeStep: string;
  priceSigFigs: number;
  maxPriceDecimals: number;
  stats24h: MarketStats;
}

export interface Candle {
  market: string;
  interval: CandleInterval;
  /** ISO 8601, like the payload of the live candle frames. */
  openTs: string;
  closeTs: string;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
  trades: number;
  closed: boolean;
}

export interface ServerTime {
  serverTime: number;
  iso: string;
}
