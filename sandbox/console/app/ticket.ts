// The order ticket's fields as an order request: side, type, time in force (gtc / ioc / alo), reduce-
// only, size in the base asset or in the quote currency (converted at the price, rounded down to
// the market's size step, exactly), TP/SL. A market order has no price (the field is disabled) and
// never rests (ioc). Returns the request, or a sentence saying what to fix.
import { compareDecimal, divDecimal, type Market, type OrderRequest } from '@gateway/client';

export interface TicketFields {
  side: 'buy' | 'sell';
  type: 'limit' | 'market';
  tif: 'gtc' | 'ioc' | 'alo';
  reduceOnly: boolean;
  size: string;
  unit: 'base' | 'quote';
  price: string;
  tp: string;
  sl: string;
}

const DECIMAL = /^\d+(\.\d{1,10})?$/;

/** The base size of the ticket: as typed, or the quote amount ÷ price rounded down to the size step. */
export function baseSize(market: Market, fields: Pick<TicketFields, 'size' | 'unit'>, price: string | null): string | null {
  if (!DECIMAL.test(fields.size)) return null;
  if (fields.unit === 'base') return fields.size;
  if (price === null || !DECIMAL.test(price) || compareDecimal(price, '0') <= 0) return null;
  const exact = divDecimal(fields.size, price)!;
  // Down to the step (truncation of a positive decimal): never more than the amount typed.
  const [whole, frac = ''] = exact.split('.');
  return market.szDecimals === 0 ? whole! : `${whole}.${frac.slice(0, market.szDecimals)}`;
}

export function orderFrom(market: Market, f: TicketFields, reference: string | null, clientOrderId: string): OrderRequest | string {
  const price = f.type === 'limit' ? f.price : reference;
  const size = baseSize(market, f, price);
  if (size === null) return f.unit === 'quote' ? 'size in USD needs a price (a limit price, or a book for a market order)' : 'size must be a positive decimal';
  if (compareDecimal(size, '0') <= 0) return 'size rounds to zero at this price';
  const legs = { ...(f.tp ? { tp: { triggerPrice: f.tp } } : {}), ...(f.sl ? { sl: { triggerPrice: f.sl } } : {}) };
  const common = { market: market.symbol, side: f.side, size, clientOrderId, ...(f.reduceOnly ? { reduceOnly: true } : {}), ...legs };
  return f.type === 'limit' ? { ...common, type: 'limit', price: f.price, tif: f.tif } : { ...common, type: 'market' };
}
