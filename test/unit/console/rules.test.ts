// The console's order checks, from a market's published rules (GET /v1/markets shape).
import { describe, expect, it } from 'vitest';
import { checkOrder } from '../../../sandbox/console/app/rules.js';

const btc = {
  symbol: 'BTC-PERP', status: 'active', szDecimals: 4, minNotional: '10.0000000000', maxLeverage: 20,
  sizeStep: '0.0001000000', priceSigFigs: 5, maxPriceDecimals: 2, lastTrade: null,
  stats24h: { open: null, high: null, low: null, last: null, change: null, changePct: null, baseVolume: '0.0000000000', quoteVolume: '0.0000000000', trades: 0, asOfSeq: null },
  openInterest: '0.0000000000',
};

describe('console order checks', () => {
  it.each([
    [{ type: 'limit', size: '0.001', price: '60000', reference: null }, null],
    [{ type: 'limit', size: '0.00001', price: '60000', reference: null }, 'size has at most 4 decimals (step 0.0001)'],
    [{ type: 'limit', size: 'abc', price: '60000', reference: null }, 'size must be a positive decimal'],
    [{ type: 'limit', size: '0.001', price: '60000.123', reference: null }, 'price has at most 2 decimals'],
    [{ type: 'limit', size: '1', price: '6.12345', reference: null }, 'price has at most 2 decimals'],
    [{ type: 'limit', size: '1', price: '123.45', reference: null }, null],
    [{ type: 'limit', size: '1', price: '1234.56', reference: null }, 'price has at most 5 significant figures'],
    [{ type: 'limit', size: '0.0001', price: '60000', reference: null }, 'notional below the minimum of 10'],
    [{ type: 'market', size: '0.0001', price: '', reference: '60000' }, 'notional below the minimum of 10'],
    [{ type: 'market', size: '0.001', price: '', reference: null }, null],
  ] as const)('%j → %s', (input, problem) => {
    expect(checkOrder(btc, input)).toBe(problem);
  });
});
