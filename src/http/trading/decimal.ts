// Exact decimal helpers for the faucet's ceiling check: balances are numeric(38,10) strings, and a
// float comparison would get `9999.99999999999` vs `10000` wrong.
const DEC = /^(-?)(\d+)(?:\.(\d{1,10}))?$/;
const SCALE = 10;

/** The decimal as an integer count of 10^-10 units; null when not a decimal with ≤ 10 places. */
export function toUnits(value: string): bigint | null {
  const m = DEC.exec(value);
  if (!m) return null;
  const units = BigInt(m[2]! + (m[3] ?? '').padEnd(SCALE, '0'));
  return m[1] === '-' ? -units : units;
}

/** Wire form: exactly 10 decimal places ("1000" → "1000.0000000000"). */
export function toWire(value: string): string {
  const units = toUnits(value);
  if (units === null) throw new Error(`not a decimal: ${value}`);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(SCALE + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -SCALE)}.${digits.slice(-SCALE)}`;
}
