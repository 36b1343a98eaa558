// The client's ledger (packages/client/src/verify/ledger.ts) names each kind of wrong claim: over an
// honest history made by the reference engine (a deposit, a grow, a flip through zero, a self-trade,
// a withdrawal), each tampering is reported at its event and field, and the untouched history has
// no discrepancy. Rounding is half away from zero on both signs.
import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../sandbox/engine/core.js';
import { divRound, feeOf, grownEntry, Ledger, realizedOf, type LedgerEvent } from '../../../packages/client/src/verify/ledger.js';
import { holdersOf } from '../../../packages/client/src/verify/scheme.js';

const A = `a::${'a'.repeat(64)}`;
const M = `m::${'b'.repeat(64)}`;

function history(): LedgerEvent[] {
  const e = new EngineCore();
  e.deposit({ party: A, amount: '100000', txId: '0x01' }, 'chain');
  e.deposit({ party: M, amount: '100000' }, 'faucet');
  const trade = (who: string, side: 'buy' | 'sell', size: string, price: string) => {
    e.placeOrder(M, { market: 'ETH-PERP', side: side === 'buy' ? 'sell' : 'buy', type: 'limit', size, price });
    e.placeOrder(who, { market: 'ETH-PERP', side, type: 'limit', size, price, tif: 'ioc' });
  };
  trade(A, 'buy', '1.5', '2000.1');
  trade(A, 'buy', '0.7', '2000.7');
  trade(A, 'sell', '3', '1999.3'); // through zero: two legs
  e.placeOrder(A, { market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.2', price: '2001' });
  e.placeOrder(A, { market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.2', price: '2001', tif: 'ioc' }); // self-trade
  e.requestWithdrawal(A, { amount: '100' });
  e.tick();
  return e.log.eventsSince(0).filter((x) => holdersOf(x as never).includes(A)) as unknown as LedgerEvent[];
}

const replay = (events: LedgerEvent[]) => {
  const l = new Ledger(A);
  for (const e of events) l.apply(e);
  return l;
};
type Leg = Record<string, string>;
const legsOf = (e: LedgerEvent) => e.payload.legs as Leg[];

describe('Ledger', () => {
  const honest = history();
  const fills = () => honest.filter((e) => e.kind === 'engine.order_filled');

  it('finds nothing wrong in an honest history, flip and self-trade included', () => {
    const flip = fills().find((e) => legsOf(e).filter((l) => l.party === A).length === 2)!;
    expect(flip).toBeDefined();
    expect(fills().some((e) => legsOf(e).every((l) => l.party === A))).toBe(true); // the self-trade
    const l = replay(honest);
    expect(l.discrepancies).toEqual([]);
    expect(l.differing).toBe(0);
    expect(l.legs).toBe(6); // open, grow, flip (2), self-trade (taker reduces, maker grows)
    expect(l.deposits.size).toBe(1);
    expect(l.withdrawals.size).toBe(1);
  });

  const tamper = (f: (events: LedgerEvent[]) => void) => {
    const events = structuredClone(honest);
    f(events);
    return replay(events).discrepancies[0];
  };
  const fillOf = (events: LedgerEvent[], i: number) => events.filter((e) => e.kind === 'engine.order_filled')[i]!;

  it.each([
    ['fee', 'fee'],
    ['newBalance', 'newBalance'],
    ['entryPrice', 'entryPrice'],
    ['realizedPnl', 'realizedPnl'],
    ['positionSize', 'positionSize'],
    ['size', 'size'],
    ['price', 'price'],
  ])('a changed %s of a leg', (key, field) => {
    const d = tamper((events) => {
      const leg = legsOf(fillOf(events, 1)).find((x) => x.party === A)!;
      leg[key] = leg[key]!.replace(/\d$/, (c) => String((Number(c) + 1) % 10)); // one unit in the 10th place
    });
    expect(d).toMatchObject({ field, seq: fillOf(honest, 1).seq, role: 'taker', trade: { side: 'buy', size: '0.7000000000', price: '2000.7000000000' } });
  });

  it('a flip given as one leg, and an opening leg reusing the old epoch id', () => {
    expect(tamper((events) => {
      const f = fillOf(events, 2);
      f.payload.legs = legsOf(f).filter((x, i) => !(x.party === A && i === 1));
    })).toMatchObject({ field: 'legs', expected: '2', actual: '1' });
    expect(tamper((events) => {
      const legs = legsOf(fillOf(events, 2));
      legs[1]!.positionId = legs[0]!.positionId!;
    })).toMatchObject({ field: 'positionId', expected: 'a fresh epoch id' });
  });

  it('a deposit credited twice, a withdrawal debited twice or never requested', () => {
    expect(tamper((events) => events.push({ ...structuredClone(events[0]!), seq: 10_000 }))).toMatchObject({ field: 'depositId', kind: 'inbound.deposit', seq: 10_000 });
    const approval = honest.find((e) => e.kind === 'engine.approve_submitted')!;
    expect(tamper((events) => events.push({ ...structuredClone(approval), seq: 10_000 }))).toMatchObject({ field: 'withdrawalId', seq: 10_000, message: expect.stringMatching(/debited twice/) });
    expect(tamper((events) => events.splice(events.findIndex((e) => e.kind === 'inbound.withdrawal_request'), 1))).toMatchObject({ field: 'withdrawalId', message: expect.stringMatching(/never requested/) });
  });

  it('rounds half away from zero on both signs, once', () => {
    expect(divRound(15n, 10n)).toBe(2n);
    expect(divRound(-15n, 10n)).toBe(-2n);
    expect(divRound(14n, 10n)).toBe(1n);
    expect(divRound(-14n, 10n)).toBe(-1n);
    const S = 10n ** 10n;
    // 0.0005 × round(0.0001 × 0.5) = 0.0005 × 0.00005 = 0.000000025 (exact, no rounding needed).
    expect(feeOf(5_000_000n, S / 10_000n, S / 2n)).toBe(250n);
    // (1 × 1 + 2 × 2) / 3 = 1.66666666666… → 1.6666666667
    expect(grownEntry(S, S, 2n * S, 2n * S)).toBe(16_666_666_667n);
    // (1 − 1.6666666667) × 0.3 × −1 = 0.20000000001 → 0.2; × +1 → −0.2
    expect(realizedOf(S, 16_666_666_667n, 3n * S / 10n, -1n)).toBe(2n * S / 10n);
    expect(realizedOf(S, 16_666_666_667n, 3n * S / 10n, 1n)).toBe(-2n * S / 10n);
  });
});
