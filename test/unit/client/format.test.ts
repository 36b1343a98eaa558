// The client's one formatter: exact (BigInt at 10 places, no float anywhere), prices by the market's
// rules, sizes by its size decimals, money to cents. The figures of issue 32 are the cases.
import { describe, expect, it } from 'vitest';
import {
  addDecimal,
  compareDecimal,
  divDecimal,
  formatDecimal,
  formatMoney,
  formatPercent,
  formatPrice,
  formatSize,
  mulDecimal,
  priceDecimals,
  readableDecimals,
  roundDecimal,
  subDecimal,
  sumDecimals,
} from '../../../packages/client/src/index.js';

const BTC = { szDecimals: 4, priceSigFigs: 5, maxPriceDecimals: 2 };
const ETH = { szDecimals: 3, priceSigFigs: 5, maxPriceDecimals: 3 };
const SOL = { szDecimals: 2, priceSigFigs: 5, maxPriceDecimals: 4 };

describe('exact arithmetic', () => {
  it('a spread is the exact difference (floats give 2.199999999999818 and 0.3499999999999943)', () => {
    expect(3002.2 - 3000).not.toBe(2.2); // what the console used to show
    expect(subDecimal('3002.2000000000', '3000.0000000000')).toBe('2.2000000000');
    expect(formatPrice(ETH, subDecimal('3002.2000000000', '3000.0000000000'), { reference: '3002.2' })).toBe('2.2');
    expect(formatPrice(SOL, subDecimal('150.3500000000', '150.0000000000'), { reference: '150.35' })).toBe('0.35');
  });
  it('adds, multiplies (half away from zero), divides, compares and sums exactly', () => {
    expect(addDecimal('0.1', '0.2')).toBe('0.3000000000');
    expect(mulDecimal('0.0000000001', '0.5')).toBe('0.0000000001');
    expect(mulDecimal('-0.0000000001', '0.5')).toBe('-0.0000000001');
    expect(divDecimal('1', '3')).toBe('0.3333333333');
    expect(divDecimal('1', '0')).toBeNull();
    expect(compareDecimal('10.5', '10.50')).toBe(0);
    expect(compareDecimal('-1', '0.1')).toBe(-1);
    expect(sumDecimals(['0.1', '0.2', '0.3'])).toBe('0.6000000000');
  });
});

describe('formatting', () => {
  it('prices show the decimals the rules give their magnitude (5 significant figures, capped)', () => {
    expect(priceDecimals(BTC, '60000')).toBe(0);
    expect(formatPrice(BTC, '60000.0000000000')).toBe('60000');
    expect(formatPrice(ETH, '3000.5000000000')).toBe('3000.5');
    expect(formatPrice(SOL, '150.2500000000')).toBe('150.25');
    expect(formatPrice(SOL, '0.0123450000')).toBe('0.0123');
    // A column keeps the reference's decimals: 3000 next to 3000.5 shows 3000.0.
    expect(formatPrice(ETH, '3000.0000000000', { reference: '3000.5' })).toBe('3000.0');
    expect(formatPrice(BTC, '1234567.0000000000', { thousands: ',' })).toBe('1,234,567');
    expect(formatPrice(BTC, null)).toBe('–');
  });
  it('sizes keep at most the size decimals, money rounds to cents, percents are signed', () => {
    expect(formatSize(BTC, '0.5000000000')).toBe('0.5');
    expect(formatSize(BTC, '0.0020000000')).toBe('0.002');
    expect(formatSize(BTC, '0.5000000000', { pad: true })).toBe('0.5000');
    expect(formatMoney('999.6749916000')).toBe('999.67');
    expect(formatMoney('3.0000061500')).toBe('3.00');
    expect(formatMoney('-0.4000000000')).toBe('-0.40');
    expect(formatMoney('0.005')).toBe('0.01'); // half away from zero
    expect(formatMoney('-0.005')).toBe('-0.01');
    expect(formatMoney('12', { sign: true })).toBe('+12.00');
    expect(formatMoney('1234567.891', { decimals: 0, thousands: ',' })).toBe('1,234,568');
    expect(formatPercent('1.2345')).toBe('+1.23%');
    expect(formatPercent('-0.005')).toBe('-0.01%');
    expect(roundDecimal('2.5', 0)).toBe('3');
    expect(formatDecimal('10.0000000000')).toBe('10');
  });
  it("an engine error's 10-place decimals read as people read them", () => {
    expect(readableDecimals('order needs 3.0000061500 of margin, 2.5000000000 free')).toBe('order needs 3 of margin, 2.5 free');
    expect(readableDecimals('min notional 10')).toBe('min notional 10');
  });
});
