// Decimal inputs are strings ("0.001"), never numbers: a float cannot hold most decimals exactly
// (0.1 + 0.2), and the engine would answer a number with a grid error that does not say why.
// Checked before anything is signed or sent, with an error that names the field and the fix.

/** Thrown before sending when a decimal field is not a string. */
export class DecimalInputError extends TypeError {
  constructor(readonly field: string, readonly value: unknown) {
    super(
      typeof value === 'number'
        ? `${field} must be a decimal string such as "${String(value)}", not the number ${String(value)}: numbers lose precision`
        : `${field} must be a decimal string such as "0.001" (got ${typeof value})`,
    );
    this.name = 'DecimalInputError';
  }
}

const DECIMAL_FIELDS = ['size', 'price', 'triggerPrice', 'limitPrice'];

/** Checks `fields` of `value` and the decimal fields of its nested `legs` (tp, sl); absent and null are fine. */
export function requireDecimalStrings(value: object, fields: string[], legs: string[]): void {
  const v = value as Record<string, unknown>;
  for (const f of fields) check(f, v[f]);
  for (const leg of legs) {
    const l = v[leg];
    if (l === undefined || l === null || typeof l !== 'object') continue;
    for (const f of DECIMAL_FIELDS) check(`${leg}.${f}`, (l as Record<string, unknown>)[f]);
  }
}

function check(field: string, value: unknown): void {
  if (value !== undefined && value !== null && typeof value !== 'string') throw new DecimalInputError(field, value);
}
