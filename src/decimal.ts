// Fixed-point decimals at scale 1e10 as BigInt: the gateway's one decimal module (candles, 24 h
// statistics, the faucet ceiling). The wire form is always a plain string with exactly 10 decimal
// places; BigInt keeps sums exact at any size, where a float would get 9999.99999999999 vs 10000 wrong.

export const SCALE = 10_000_000_000n;
const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,10}))?$/;

/** Parses a decimal string with 0..10 decimals; throws on anything else (exponents, NaN, >10 places). */
export function parseDecimal(text: string): bigint {
  const m = DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a decimal with at most 10 places: ${JSON.stringify(text)}`);
  const units = BigInt(m[2]!) * SCALE + BigInt((m[3] ?? '').padEnd(10, '0'));
  return m[1] === '-' ? -units : units;
}

export function formatDecimal(value: bigint): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / SCALE;
  const frac = (abs % SCALE).toString().padStart(10, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

const WIRE = /^-?\d+\.\d{10}$/;

/** true for a decimal string with 0..10 places (what parseDecimal accepts), without converting it. */
export function isDecimal(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL.test(text);
}

/** Rewrites any accepted decimal string in the 10-place wire form ("0.5" → "0.5000000000"). */
export function normalizeDecimal(text: string): string {
  // Engine output is already in wire form (docs/engine.md "Numbers"): the common case costs one regex.
  if (WIRE.test(text) && !/^-?0\d/.test(text) && text !== '-0.0000000000') return text;
  return formatDecimal(parseDecimal(text));
}

export const ZERO = '0.0000000000';

/** Integer division rounding half away from zero (the engine's rounding, docs/engine.md). */
export function divRound(n: bigint, d: bigint): bigint {
  if (d === 0n) throw new RangeError('division by zero');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const negative = n < 0n;
  const q = ((negative ? -n : n) + d / 2n) / d;
  return negative ? -q : q;
}

/** a × b of two scaled values, rounded half away from zero to 10 places. */
export function mulDecimal(a: bigint, b: bigint): bigint {
  return divRound(a * b, SCALE);
}

/** a ÷ b of two scaled values, rounded half away from zero to 10 places. */
export function divDecimal(a: bigint, b: bigint): bigint {
  return divRound(a * SCALE, b);
}
