// Each market's order grid (docs/engine.md "Orders and matching"): sizes are multiples of 10^-szDecimals; prices
// have at most 5 significant figures (unless integers) and at most 6 − szDecimals decimals.

export interface MarketInfo {
  symbol: string;
  szDecimals: number;
  minNotional: number;
  maxLeverage: number;
}

/** The largest grid price ≤ p (or the smallest ≥ p with `up`), as a plain decimal string. */
export function gridPrice(m: MarketInfo, p: number, up = false): string {
  if (!(p > 0)) throw new RangeError(`price must be positive, got ${p}`);
  const maxDecimals = Math.max(0, 6 - m.szDecimals);
  const magnitude = Math.floor(Math.log10(p)); // 65000 → 4, 0.123 → -1
  // 5 significant figures ⇒ 4 − magnitude decimals; integers (magnitude ≥ 4) are always fine.
  const decimals = Math.max(0, Math.min(maxDecimals, 4 - magnitude));
  const f = 10 ** decimals;
  let v = (up ? Math.ceil(p * f - 1e-9) : Math.floor(p * f + 1e-9)) / f;
  if (v <= 0) v = 1 / f;
  return v.toFixed(decimals);
}

/** A grid size of roughly `notional` worth at `price`, never below the market's minimum notional. */
export function gridSize(m: MarketInfo, price: number, notional: number): string {
  const step = 10 ** -m.szDecimals;
  const target = Math.max(notional, m.minNotional * 1.2) / price;
  const steps = Math.max(1, Math.ceil(target / step));
  return (steps * step).toFixed(m.szDecimals);
}

/** Rounds an absolute size to the grid (down), e.g. to close a position exactly. */
export function gridAbs(m: MarketInfo, size: number): string {
  const step = 10 ** -m.szDecimals;
  return (Math.round(Math.abs(size) / step) * step).toFixed(m.szDecimals);
}

/** Whether a price string obeys the grid (used by tests). */
export function onPriceGrid(m: MarketInfo, price: string): boolean {
  const [int = '', frac = ''] = price.split('.');
  const f = frac.replace(/0+$/, '');
  if (f === '') return true;
  if (f.length > 6 - m.szDecimals) return false;
  return (int.replace(/^0+/, '') + f).replace(/^0+/, '').length <= 5;
}

/** The grid's price step at `p`: the smallest price difference the grid allows there. */
export function gridTick(m: MarketInfo, p: number): number {
  const maxDecimals = Math.max(0, 6 - m.szDecimals);
  const magnitude = Math.floor(Math.log10(p));
  return 10 ** -Math.max(0, Math.min(maxDecimals, 4 - magnitude));
}
