import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatDecimal, normalizeDecimal, parseDecimal } from '../../../src/decimal.js';

describe('fixed-point decimals at scale 1e10', () => {
  it('writes every value with exactly ten places', () => {
    expect(normalizeDecimal('0.5')).toBe('0.5000000000');
    expect(normalizeDecimal('65000')).toBe('65000.0000000000');
    expect(normalizeDecimal('-0.0000000001')).toBe('-0.0000000001');
    expect(formatDecimal(0n)).toBe('0.0000000000');
    expect(formatDecimal(parseDecimal('1.25') + parseDecimal('2.0000000005'))).toBe('3.2500000005');
  });

  it('rejects what the wire never carries', () => {
    for (const bad of ['1e5', 'NaN', '', '1.00000000001', '.5', '+1', ' 1']) {
      expect(() => parseDecimal(bad), bad).toThrow(RangeError);
    }
  });

  it('round-trips any 10-place value exactly, far beyond 2^53', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 28n), max: 10n ** 28n }), (units) => {
        expect(parseDecimal(formatDecimal(units))).toBe(units);
      }),
    );
  });
});
