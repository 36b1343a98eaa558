// The open interest kept from fill legs (src/projections/open-interest.ts): Σ of the open long
// epochs' sizes per market, set from each leg's size after it, exact.
import { describe, expect, it } from 'vitest';
import { OpenInterestBook } from '../../../src/projections/open-interest.js';
import type { FillLeg, FillPayload } from '../../../src/projections/types.js';
import { formatDecimal, parseDecimal } from '../../../src/decimal.js';

const leg = (party: string, positionId: string, positionSize: string): FillLeg => ({
  party, orderId: `o-${party}`, role: 'maker', side: 'buy', size: '1', price: '100', fee: '0', positionId, positionSize, entryPrice: '100', realizedPnl: '0', newBalance: '1000',
});
const fill = (...legs: FillLeg[]): FillPayload => ({ matchId: 'm', price: '100', size: '1', takerSide: 'buy', takerOrderId: 't', makerOrderId: 'm', legs });

describe('OpenInterestBook', () => {
  it('sums the long epochs, follows flips and closes, and reports only real changes', () => {
    const oi = new OpenInterestBook();
    expect(oi.value('BTC-PERP')).toBe('0.0000000000');
    // a buys 1.5 from b: a long 1.5, b short 1.5.
    expect(oi.apply('BTC-PERP', fill(leg('a', 'a1', '1.5'), leg('b', 'b1', '-1.5')))).toBe(true);
    expect(oi.value('BTC-PERP')).toBe('1.5000000000');
    // c buys 0.1 from a (a reduces): the long side moves from a to c, the total stays.
    expect(oi.apply('BTC-PERP', fill(leg('c', 'c1', '0.1'), leg('a', 'a1', '1.4')))).toBe(false);
    expect(oi.value('BTC-PERP')).toBe('1.5000000000');
    // b buys 2 from a: b flips (closing leg first, then its new epoch), a closes 1.4 and goes short 0.6.
    expect(oi.apply('BTC-PERP', fill(leg('b', 'b1', '0'), leg('b', 'b2', '0.5'), leg('a', 'a1', '0'), leg('a', 'a2', '-0.6')))).toBe(true);
    expect(oi.value('BTC-PERP')).toBe('0.6000000000'); // longs: c 0.1 + b 0.5 = shorts: a 0.6
    // The same leg again (a replay, or one the seed already holds) changes nothing.
    expect(oi.apply('BTC-PERP', fill(leg('b', 'b2', '0.5')))).toBe(false);
    // Other markets are apart.
    oi.apply('ETH-PERP', fill(leg('a', 'e1', '0.0000000001'), leg('b', 'e2', '-0.0000000001')));
    expect([oi.value('ETH-PERP'), oi.value('BTC-PERP')]).toEqual(['0.0000000001', '0.6000000000']);
    // Everyone flat: zero, and the market is no longer listed.
    oi.apply('BTC-PERP', fill(leg('c', 'c1', '0'), leg('b', 'b2', '0'), leg('a', 'a2', '0')));
    expect(oi.value('BTC-PERP')).toBe('0.0000000000');
    expect(oi.markets()).toEqual(['ETH-PERP']);
  });

  it('a seed replaces the state; legs then move its epochs', () => {
    const oi = new OpenInterestBook();
    oi.apply('SOL-PERP', fill(leg('x', 'x1', '9')));
    oi.seed([{ market: 'BTC-PERP', positionId: 'p1', size: '0.3000000000' }, { market: 'BTC-PERP', positionId: 'p2', size: '0.7' }]);
    expect([oi.value('SOL-PERP'), oi.value('BTC-PERP')]).toEqual(['0.0000000000', '1.0000000000']);
    expect(oi.apply('BTC-PERP', fill(leg('p', 'p1', '-0.2'), leg('q', 'q1', '0.5')))).toBe(true);
    expect(oi.value('BTC-PERP')).toBe('1.2000000000');
  });

  it('equals the sum of the long sizes recomputed from the last size of every epoch (random fills)', () => {
    let state = 12345;
    const rand = (n: number) => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);
    const oi = new OpenInterestBook();
    const last = new Map<string, bigint>(); // positionId → last size
    for (let i = 0; i < 2_000; i++) {
      const legs = Array.from({ length: 1 + rand(4) }, () => {
        const id = `p${rand(30)}`;
        const size = BigInt(rand(2_000_001) - 1_000_000) * 1_000n; // up to ±0.1, 7 places
        last.set(id, size);
        return leg('u', id, formatDecimal(size));
      });
      oi.apply('BTC-PERP', fill(...legs));
      const expected = [...last.values()].filter((s) => s > 0n).reduce((a, b) => a + b, 0n);
      expect(parseDecimal(oi.value('BTC-PERP'))).toBe(expected);
    }
  });
});
