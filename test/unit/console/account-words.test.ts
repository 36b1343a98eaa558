// The console's account check says the first discrepancy in a trader's words: which trade (side,
// size, market, price, event), what was recorded and what the published rules give.
import { describe, expect, it } from 'vitest';
import { inWords } from '../../../sandbox/console/app/account-verification.js';
import type { AccountProblem } from '../../../packages/client/src/index.js';

const leg = (field: string, expected: string, actual: string): AccountProblem =>
  ({ kind: 'event', eventKind: 'engine.order_filled', seq: 42, field, expected, actual, market: 'ETH-PERP', role: 'taker', leg: 0, trade: { side: 'sell', size: '1.5000000000', price: '2000.5000000000' }, message: 'm' }) as AccountProblem;

describe('inWords', () => {
  it.each([
    ['fee', 'The fee charged on your sell of 1.5 ETH-PERP at 2000.5 (event #42) is 1.8; the published fee (0.05 % of the notional for a taker, nothing for a maker) is 1.5.'],
    ['entryPrice', 'After your sell of 1.5 ETH-PERP at 2000.5 (event #42) your entry price was recorded as 1.8; averaging your fills gives 1.5.'],
    ['realizedPnl', 'The profit or loss realized by your sell of 1.5 ETH-PERP at 2000.5 (event #42) was recorded as 1.8; it should be 1.5.'],
    ['positionSize', 'After your sell of 1.5 ETH-PERP at 2000.5 (event #42) your position was recorded as 1.8; your fills add up to 1.5.'],
    ['newBalance', 'After your sell of 1.5 ETH-PERP at 2000.5 (event #42) your balance was recorded as 1.8; it should be 1.5.'],
  ])('a wrong %s of a fill', (field, words) => {
    expect(inWords(leg(field, '1.5000000000', '1.8000000000'))).toBe(words);
  });

  it('a deposit not credited, a withdrawal debited wrongly, the screen showing another number', () => {
    expect(inWords({ kind: 'event', eventKind: 'inbound.deposit', seq: 7, field: 'newBalance', expected: '1500.0000000000', actual: '1000.0000000000', message: 'm' })).toBe(
      'Your deposit at event #7 was not credited as it should be: the balance after it was recorded as 1000 instead of 1500.',
    );
    expect(inWords({ kind: 'event', eventKind: 'engine.approve_submitted', seq: 9, field: 'newBalance', expected: '900.0000000000', actual: '800.0000000000', message: 'm' })).toBe(
      'Your withdrawal at event #9 was debited wrongly: the balance after it was recorded as 800 instead of 900.',
    );
    expect(inWords({ kind: 'view', source: 'account', field: 'collateral', expected: '999994.0000000000', actual: '999995.0000000000', message: 'm' })).toBe(
      'The collateral shown on this screen (999995) is not what your committed history gives (999994).',
    );
    expect(inWords({ kind: 'view', source: 'positions', field: 'entryPrice', market: 'BTC-PERP', expected: '60000.0000000000', actual: '60001.0000000000', message: 'm' })).toBe(
      'The BTC-PERP entry price shown on this screen (60001) is not what your committed history gives (60000).',
    );
    expect(inWords({ kind: 'deposit', depositId: 'd-1', seq: 3, message: 'deposit d-1 of 5.0000000000 was recorded but never credited to your balance' })).toBe(
      'Deposit d-1 of 5.0000000000 was recorded but never credited to your balance.',
    );
  });
});
