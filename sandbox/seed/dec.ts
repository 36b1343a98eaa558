// Fixed-point decimals with 10 places as bigint (the wire and numeric(38,10) precision).
export const ONE = 10_000_000_000n;

export function dec(text: string): bigint {
  const neg = text.startsWith('-');
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.');
  const v = BigInt(i!) * ONE + BigInt((f + '0000000000').slice(0, 10));
  return neg ? -v : v;
}

export function fmt(v: bigint): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  return `${neg ? '-' : ''}${a / ONE}.${(a % ONE).toString().padStart(10, '0')}`;
}

/** a × b for two scaled values, truncated to 10 places. */
export const mul = (a: bigint, b: bigint): bigint => (a * b) / ONE;
/** a ÷ b for two scaled values, truncated to 10 places. */
export const div = (a: bigint, b: bigint): bigint => (a * ONE) / b;
export const abs = (a: bigint): bigint => (a < 0n ? -a : a);
