// Order checks from the market's published rules (`GET /v1/markets`), run before a call so a
// person sees what to fix; the engine checks again and its rejections are shown as they come.
import { compareDecimal, formatDecimal, mulDecimal, type Market } from '@gateway/client';

const DECIMAL = /^\d+(\.\d+)?$/;

function decimals(value: string): number {
  return value.split('.')[1]?.length ?? 0;
}

function sigFigs(value: string): number {
  const digits = value.replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.max(digits.length, 1);
}

export interface OrderInput {
  type: 'limit' | 'market';
  size: string;
  price: string;
  /** Reference price for a market order's notional (last trade or best level). */
  reference: string | null;
}

/** The first rule the input breaks, as a sentence, or null. */
export function checkOrder(market: Market, input: OrderInput): string | null {
  if (!DECIMAL.test(input.size) || compareDecimal(input.size, '0') <= 0) return 'size must be a positive decimal';
  if (decimals(input.size) > market.szDecimals) return `size has at most ${market.szDecimals} decimals (step ${market.sizeStep.replace(/0+$/, '')})`;
  if (input.type === 'limit') {
    if (!DECIMAL.test(input.price) || compareDecimal(input.price, '0') <= 0) return 'price must be a positive decimal';
    if (decimals(input.price) > market.maxPriceDecimals) return `price has at most ${market.maxPriceDecimals} decimals`;
    if (sigFigs(input.price) > market.priceSigFigs && decimals(input.price) > 0) return `price has at most ${market.priceSigFigs} significant figures`;
  }
  const price = input.type === 'limit' ? input.price : input.reference;
  if (decimals(input.size) > 10 || (price !== null && decimals(price) > 10)) return 'at most 10 decimals';
  if (price !== null && compareDecimal(mulDecimal(input.size, price), market.minNotional) < 0) return `notional below the minimum of ${formatDecimal(market.minNotional)}`;
  return null;
}

export function describeRules(market: Market): string {
  return `size step ${market.sizeStep.replace(/0+$/, '')} · ≤ ${market.maxPriceDecimals} price decimals, ${market.priceSigFigs} sig. figs · min notional ${formatDecimal(market.minNotional)} · max leverage ${market.maxLeverage}× · ${market.status}`;
}
