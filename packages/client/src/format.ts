// Numbers on screen (docs/client.md "Numbers on screen"): the one formatter of the client, exact.
// The gateway's decimals are strings with 10 places; a screen adds, subtracts and multiplies them
// (spread, cumulative size, notional, PnL) and shows them rounded to what the market's rules make
// meaningful. Everything here is BigInt at 10 places, as the gateway computes: no float ever
// touches a figure, so a spread of 60002.2 − 60000 shows "2.2", never "2.199999999999818".
import { divRound, fromUnits, toUnits } from './account.js';

/** The rules a price or size is shown by (a `Market` of GET /v1/markets fits). */
export interface DisplayRules {
  /** Sizes are multiples of 10^-szDecimals. */
  szDecimals: number;
  /** Prices have at most this many significant figures (integers excepted); default 5. */
  priceSigFigs?: number;
  /** Prices have at most this many decimals; default max(0, 6 − szDecimals). */
  maxPriceDecimals?: number;
}

type Dec = string;

// ---- exact arithmetic on decimal strings (0..10 places in, 10 places out) ----

/** a + b, exact. */
export const addDecimal = (a: Dec, b: Dec): Dec => fromUnits(toUnits(a) + toUnits(b));
/** a − b, exact. */
export const subDecimal = (a: Dec, b: Dec): Dec => fromUnits(toUnits(a) - toUnits(b));
/** a × b, rounded half away from zero to 10 places (the engine's rounding). */
export const mulDecimal = (a: Dec, b: Dec): Dec => fromUnits(divRound(toUnits(a) * toUnits(b), 10_000_000_000n));
/** a ÷ b, rounded half away from zero to 10 places; null when b is zero. */
export const divDecimal = (a: Dec, b: Dec): Dec | null => {
  const d = toUnits(b);
  return d === 0n ? null : fromUnits(divRound(toUnits(a) * 10_000_000_000n, d));
};
/** −1, 0 or 1 as a is below, equal to or above b. */
export const compareDecimal = (a: Dec, b: Dec): -1 | 0 | 1 => {
  const x = toUnits(a);
  const y = toUnits(b);
  return x < y ? -1 : x > y ? 1 : 0;
};
/** Sum of decimals (0 for none). */
export const sumDecimals = (values: Iterable<Dec>): Dec => {
  let total = 0n;
  for (const v of values) total += toUnits(v);
  return fromUnits(total);
};
export const isNegativeDecimal = (a: Dec): boolean => toUnits(a) < 0n;


// ---- rounding and rendering ----

/** `value` rounded half away from zero to `places` decimals (0..10), rendered with exactly that many. */
export function roundDecimal(value: Dec, places: number): Dec {
  const p = Math.max(0, Math.min(10, Math.trunc(places)));
  const step = 10n ** BigInt(10 - p);
  const units = divRound(toUnits(value), step) * step;
  const text = fromUnits(units);
  return p === 0 ? text.slice(0, text.indexOf('.')) : text.slice(0, text.indexOf('.') + 1 + p);
}

function group(text: string, separator: string): string {
  if (!separator) return text;
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const [int, frac] = body.split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
  return `${negative ? '-' : ''}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}

const trimZeros = (text: string): string => (text.includes('.') ? text.replace(/\.?0+$/, '') : text);
const integerDigits = (value: Dec): number => {
  const int = value.replace(/^-/, '').split('.')[0]!.replace(/^0+/, '');
  return int.length;
};

export interface PriceFormat {
  /**
   * The price whose magnitude sets the decimals (a book column, a spread: the best ask), so every
   * figure of a column shows the same number of decimals. Default: the value itself.
   */
  reference?: Dec | null;
  /** Thousands separator (default none: the figure copies back into an input as is). */
  thousands?: string;
}

/**
 * The decimals a price of this magnitude shows: what the market's rules allow a price to have
 * (at most `priceSigFigs` significant figures, at most `maxPriceDecimals` decimals).
 */
export function priceDecimals(rules: DisplayRules, reference: Dec): number {
  const sig = rules.priceSigFigs ?? 5;
  const max = rules.maxPriceDecimals ?? Math.max(0, 6 - rules.szDecimals);
  const digits = integerDigits(reference);
  return Math.max(0, Math.min(max, sig - Math.max(digits, 1) + (digits === 0 ? leadingFractionZeros(reference) + 1 : 0)));
}
function leadingFractionZeros(value: Dec): number {
  const frac = value.split('.')[1] ?? '';
  const m = /^0*/.exec(frac)!;
  return m[0].length === frac.length ? 0 : m[0].length;
}

/** A price as the market shows it: the decimals its rules give a price of this magnitude. "–" for null. */
export function formatPrice(rules: DisplayRules, value: Dec | null | undefined, options: PriceFormat = {}): string {
  if (value === null || value === undefined) return '–';
  const places = priceDecimals(rules, options.reference ?? value);
  return group(roundDecimal(value, places), options.thousands ?? '');
}

/** A size (base units) with at most the market's size decimals, trailing zeros dropped ("0.5", "1.25"). */
export function formatSize(rules: DisplayRules, value: Dec | null | undefined, options: { pad?: boolean; thousands?: string } = {}): string {
  if (value === null || value === undefined) return '–';
  const text = roundDecimal(value, rules.szDecimals);
  return group(options.pad ? text : trimZeros(text), options.thousands ?? '');
}

/** Money (collateral, PnL, fees, notional in the quote currency): 2 decimals by default, rounded half away from zero. */
export function formatMoney(value: Dec | null | undefined, options: { decimals?: number; thousands?: string; sign?: boolean } = {}): string {
  if (value === null || value === undefined) return '–';
  const text = group(roundDecimal(value, options.decimals ?? 2), options.thousands ?? '');
  return options.sign && !text.startsWith('-') && toUnits(value) !== 0n ? `+${text}` : text;
}

/** A percentage given as a decimal of percent ("1.2345" → "+1.23%"), signed. */
export function formatPercent(value: Dec | null | undefined, decimals = 2): string {
  if (value === null || value === undefined) return '–';
  const text = roundDecimal(value, decimals);
  return `${text.startsWith('-') ? '' : '+'}${text}%`;
}

/**
 * Any 10-place decimal read by people where no market rule applies (an error's figures): at most
 * `places` decimals, trailing zeros dropped.
 */
export function formatDecimal(value: Dec | null | undefined, places = 4): string {
  if (value === null || value === undefined) return '–';
  return trimZeros(roundDecimal(value, places));
}

/**
 * The 10-place decimals inside a text (an engine error such as "needs 3.0000061500 of free
 * collateral") shown as people read them (4 places at most, trailing zeros dropped).
 */
export function readableDecimals(text: string, places = 4): string {
  return text.replace(/-?\d+\.\d{5,10}\b/g, (m) => formatDecimal(m, places));
}
