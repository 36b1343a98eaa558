// A position's Close: a reduce-only market order for the whole position, the other way, bounded by
// a worst price CLOSE_SLIPPAGE from the mark (the market order's `price`), so a thin book is never
// swept; and the answer in words: what closed, at what price, and plainly when nothing filled.
import { addDecimal, compareDecimal, formatDecimal, mulDecimal, priceDecimals, roundDecimal, subDecimal, type Market, type OrderRequest } from '@gateway/client';

/** The most a close may trade away from the mark: 1 %. */
export const CLOSE_SLIPPAGE = '0.01';
export const CLOSE_SLIPPAGE_LABEL = '1 %';

/**
 * The worst price of a close: the mark moved CLOSE_SLIPPAGE against the order, on the market's price
 * grid, rounded towards the mark (a sell's bound up, a buy's down) so the bound is never looser.
 */
export function closeBound(m: Market, side: 'buy' | 'sell', mark: string): string {
  const raw = mulDecimal(mark, side === 'sell' ? subDecimal('1', CLOSE_SLIPPAGE) : addDecimal('1', CLOSE_SLIPPAGE));
  const places = priceDecimals(m, raw);
  let bound = roundDecimal(raw, places);
  const unit = places === 0 ? '1' : `0.${'0'.repeat(places - 1)}1`;
  if (side === 'sell' && compareDecimal(bound, raw) < 0) bound = addDecimal(bound, unit);
  if (side === 'buy' && compareDecimal(bound, raw) > 0) bound = subDecimal(bound, unit);
  return bound;
}

export function closeOrder(m: Market, position: { size: string; markPrice: string }): OrderRequest {
  const long = !position.size.startsWith('-');
  const side = long ? 'sell' : 'buy';
  return { market: m.symbol, side, type: 'market', size: formatDecimal(position.size.replace(/^-/, ''), 10), price: closeBound(m, side, position.markPrice), reduceOnly: true };
}

/** The close's outcome as a sentence (the order id aside). */
export function describeClose(order: { side: string; size: string; price?: string }, answer: { status: string; filledSize: string; avgPrice: string | null }, show: (v: string) => string): string {
  const bound = order.price ? `${order.side === 'sell' ? 'at or above' : 'at or below'} ${show(order.price)}` : '';
  if (compareDecimal(answer.filledSize, '0') === 0) {
    return `nothing filled: no ${order.side === 'sell' ? 'bid' : 'ask'} ${bound} (within ${CLOSE_SLIPPAGE_LABEL} of the mark); the position stays open`;
  }
  const avg = answer.avgPrice ? ` at ${show(answer.avgPrice)}` : '';
  if (compareDecimal(answer.filledSize, order.size) < 0) {
    return `partly closed: ${formatDecimal(answer.filledSize)} of ${formatDecimal(order.size)}${avg}; the rest found no ${order.side === 'sell' ? 'bid' : 'ask'} ${bound}`;
  }
  return `closed ${formatDecimal(answer.filledSize)}${avg}`;
}
