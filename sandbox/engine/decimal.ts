/**
 * Fixed-point decimals for the reference engine.
 *
 * Every amount is a BigInt scaled by 10^10 (ten decimal places). Wire input is a
 * plain-notation string with 0..10 decimals; wire output always has exactly 10.
 */

export const DECIMALS = 10;
export const SCALE = 10n ** 10n;

const INPUT_RE = /^(-?)(\d+)(?:\.(\d{1,10}))?$/;

/** Parse a wire decimal. Returns null for anything that is not a plain decimal string. */
export function parseDec(input: unknown): bigint | null {
  if (typeof input !== 'string' || input.length === 0 || input.length > 60) return null;
  const m = INPUT_RE.exec(input);
  if (!m) return null;
  const neg = m[1] === '-';
  const intPart = m[2] ?? '0';
  const frac = (m[3] ?? '').padEnd(DECIMALS, '0');
  const v = BigInt(intPart) * SCALE + BigInt(frac);
  return neg ? -v : v;
}

/** Format a scaled value with exactly 10 decimals; zero is "0.0000000000" (never "-0..."). */
export function formatDec(v: bigint): string {
  // One BigInt → string conversion, then slicing (no BigInt division or modulo: this runs for
  // every decimal of every event and answer).
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString();
  const n = digits.length;
  if (n > DECIMALS) return `${neg ? '-' : ''}${digits.slice(0, n - DECIMALS)}.${digits.slice(n - DECIMALS)}`;
  return `${neg ? '-0.' : '0.'}${ZERO_FRAC.slice(n)}${digits}`;
}

const ZERO_FRAC = '0'.repeat(DECIMALS);

/** Same as formatDec but passes null through. */
export function formatDecOrNull(v: bigint | null): string | null {
  return v === null ? null : formatDec(v);
}

/** Integer division rounding half away from zero. */
export function divRound(n: bigint, d: bigint): bigint {
  if (d === 0n) throw new RangeError('division by zero');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const neg = n < 0n;
  const a = neg ? -n : n;
  const q = (a + d / 2n) / d;
  return neg ? -q : q;
}

/** a × b for two scaled values, rounded half away from zero to 10 decimals. */
export function mul(a: bigint, b: bigint): bigint {
  return divRound(a * b, SCALE);
}

/** a ÷ b for two scaled values, rounded half away from zero to 10 decimals. */
export function div(a: bigint, b: bigint): bigint {
  return divRound(a * SCALE, b);
}

export function abs(a: bigint): bigint {
  return a < 0n ? -a : a;
}

export function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

export function sign(a: bigint): -1n | 0n | 1n {
  return a > 0n ? 1n : a < 0n ? -1n : 0n;
}

/** Convert a whole-unit integer or small literal like "0.0005" into scaled form (for constants). */
export function dec(literal: string): bigint {
  const v = parseDec(literal);
  if (v === null) throw new Error(`bad decimal literal ${literal}`);
  return v;
}

export const ZERO = 0n;
export const ZERO_STR = '0.0000000000';
