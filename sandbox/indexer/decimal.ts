// Fixed-point decimals for the indexer: values are bigints scaled by 10^10, the precision of the
// engine's wire decimals and of the schema's numeric(38,10). Own code on purpose: the indexer must
// interoperate with any engine that follows the contract, so it shares no code with the reference engine.

export const SCALE = 10n ** 10n;
const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,10}))?$/;

/** Parses a wire decimal ("65000", "-0.5", "1.0000000000"); throws on anything else. */
export function parseDec(value: unknown): bigint {
  if (typeof value !== 'string') throw new TypeError(`decimal must be a string, got ${JSON.stringify(value)}`);
  const m = DECIMAL.exec(value);
  if (!m) throw new TypeError(`malformed decimal ${JSON.stringify(value)}`);
  const v = BigInt(m[2]!) * SCALE + BigInt((m[3] ?? '').padEnd(10, '0'));
  return m[1] === '-' ? -v : v;
}

/** Formats with exactly 10 decimals, as PostgreSQL prints numeric(38,10). */
export function formatDec(v: bigint): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  const s = `${a / SCALE}.${(a % SCALE).toString().padStart(10, '0')}`;
  return neg ? `-${s}` : s;
}

/** Normalises a wire decimal to the 10-decimal form, keeping null. */
export function normDec(value: unknown): string | null {
  return value === null || value === undefined ? null : formatDec(parseDec(value));
}

/** n / d rounded half away from zero (the engine's rounding of average prices). */
export function divRound(n: bigint, d: bigint): bigint {
  if (d === 0n) throw new RangeError('division by zero');
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const neg = n < 0n;
  const q = ((neg ? -n : n) + d / 2n) / d;
  return neg ? -q : q;
}
