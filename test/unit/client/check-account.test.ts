// checkAccount's reconciliation and its comparison with the view, on a history made by the reference
// engine (deposits, a trade, a withdrawal) and handed over as one verified batch: each receipt
// matched once, a receipt never credited, a credit never recorded, a different amount, a receipt not
// committed yet (pending), and a view number newer than the commitment (pending) or not (different).
import { describe, expect, it } from 'vitest';
import { EngineCore } from '../../../sandbox/engine/core.js';
import { formatDec } from '../../../sandbox/engine/decimal.js';
import { checkAccount, type AccountInputs } from '../../../packages/client/src/verify/verify-account.js';
import { holdersOf } from '../../../packages/client/src/verify/scheme.js';
import type { Account, AccountAsOf, Deposit, UserBatchProof, Withdrawal } from '../../../packages/client/src/generated/wire.js';
import type { HistoryVerdict } from '../../../packages/client/src/verify/history.js';

const A = `a::${'a'.repeat(64)}`;
const M = `m::${'b'.repeat(64)}`;

function inputs(): AccountInputs {
  const e = new EngineCore();
  e.deposit({ party: A, amount: '1000', txId: '0xaa' }, 'chain');
  e.deposit({ party: M, amount: '100000' }, 'faucet');
  e.placeOrder(M, { market: 'ETH-PERP', side: 'sell', type: 'limit', size: '1', price: '2000' });
  e.placeOrder(A, { market: 'ETH-PERP', side: 'buy', type: 'limit', size: '1', price: '2000', tif: 'ioc' });
  e.requestWithdrawal(A, { amount: '10' });
  e.tick();
  const events = e.log.eventsSince(0).filter((x) => holdersOf(x as never).includes(A));
  const last = events.at(-1)!.seq;
  const proof = { party: A, userSeq: 1, status: 'verified', events, chain: null, path: [] } as unknown as UserBatchProof;
  const history: HistoryVerdict = {
    party: A, status: 'verified', batches: 1, events: events.length, verified: 1, pending: 0, failed: 0, chainBreaks: [], eventBatches: new Map(),
    verdicts: [{ status: 'verified', party: A, userSeq: 1, userRoot: '', manifestRoot: '', batchNum: 1, txId: null, committedAt: null, eventCount: events.length, gatewayStatus: 'verified' }],
  };
  const dep = events.find((x) => x.kind === 'inbound.deposit')!;
  const req = events.find((x) => x.kind === 'inbound.withdrawal_request')!;
  const appr = events.find((x) => x.kind === 'engine.approve_submitted')!;
  const pos = e.accounts.openPositions(A)[0]!;
  const fmt = formatDec;
  const account = {
    party: A, asOfSeq: last, collateral: fmt(e.accounts.balance(A)), collateralAsOfSeq: appr.seq,
    positions: [{ positionId: pos.positionId, market: 'ETH-PERP', size: fmt(pos.size), entryPrice: fmt(pos.entryPrice), realizedPnl: fmt(pos.realizedPnl), asOfSeq: dep.seq + 3 }],
  } as unknown as Account;
  return {
    party: A, history, proofs: new Map([[1, proof]]), account,
    openPositions: [{ positionId: pos.positionId, party: A, market: 'ETH-PERP', size: fmt(pos.size), entryPrice: fmt(pos.entryPrice), realizedPnl: fmt(pos.realizedPnl), status: 'open', updatedSeq: dep.seq + 3 } as never],
    deposits: [{ seq: dep.seq, depositId: (dep.payload as { depositId: string }).depositId, party: A, amount: '1000.0000000000', source: 'chain', txId: '0xaa', createdAt: dep.ts } as Deposit],
    withdrawals: [{ seq: req.seq, withdrawalId: (req.payload as { withdrawalId: string }).withdrawalId, party: A, amount: '10.0000000000', nonce: 1, status: 'approved', reason: null, decidedSeq: appr.seq, createdAt: req.ts, decidedAt: appr.ts } as Withdrawal],
  };
}

describe('checkAccount', () => {
  it('verifies a history whose receipts, credits and view agree', () => {
    const v = checkAccount(inputs());
    expect(v.problems).toEqual([]);
    expect(v).toMatchObject({ status: 'verified', pendingAfterSeq: null, pendingCount: 0, deposits: { receipts: 1, credited: 1, pending: 0 }, withdrawals: { approved: 1, debited: 1, pending: 0 } });
    expect(v.positions[0]).toMatchObject({ market: 'ETH-PERP', size: { status: 'verified', recomputed: '1.0000000000' } });
  });

  it('a recorded deposit never credited, one credited that is not recorded, and a different amount', () => {
    const i = inputs();
    i.deposits = [...i.deposits, { ...i.deposits[0]!, depositId: 'd-ghost', seq: 2, txId: '0xbb' }];
    expect(checkAccount(i).first).toMatchObject({ kind: 'deposit', depositId: 'd-ghost', message: 'deposit d-ghost of 1000.0000000000 (chain transaction 0xbb) was recorded but never credited to your balance' });
    const j = inputs();
    j.deposits = [];
    expect(checkAccount(j).first).toMatchObject({ kind: 'deposit', message: expect.stringMatching(/^a deposit d-\S+ of 1000\.0000000000 was credited to your balance at seq 1, but no such deposit is recorded$/) });
    const k = inputs();
    k.deposits = [{ ...k.deposits[0]!, amount: '1001.0000000000' }];
    expect(checkAccount(k).first).toMatchObject({
      kind: 'deposit', field: 'amount', expected: '1001.0000000000', actual: '1000.0000000000',
      message: expect.stringMatching(/of 1001\.0000000000 at seq 1 differs from its credit: the amount: 1001\.0000000000 recorded, 1000\.0000000000 credited to your balance$/),
    });
  });

  it('a receipt whose chain transaction differs from the credit names the field and both ids (issue 39)', () => {
    // The receipt and the credit agree on id, amount and seq: only the transaction id tells them apart.
    const i = inputs();
    i.deposits = [{ ...i.deposits[0]!, txId: '0xf16d' }];
    const first = checkAccount(i).first;
    expect(first).toMatchObject({ kind: 'deposit', field: 'txId', expected: '0xf16d', actual: '0xaa' });
    expect(first?.message).toMatch(/differs from its credit: the chain transaction: recorded with transaction 0xf16d, the credit committed at seq 1 carries transaction 0xaa$/);
    // A credit committed without the id the chain recorded (the simulator's chain deposits before the fix).
    const j = inputs();
    const proof = j.proofs!.get(1)!;
    const events = proof.events.map((e) => (e.kind === 'inbound.deposit' ? { ...e, payload: { ...e.payload, txId: null } } : e));
    j.proofs = new Map([[1, { ...proof, events }]]);
    expect(checkAccount(j).first).toMatchObject({ kind: 'deposit', field: 'txId', expected: '0xaa', actual: null, message: expect.stringMatching(/recorded with transaction 0xaa, the credit committed at seq 1 carries no transaction id$/) });
    // An amount and a seq that differ too: every difference is in the message, the first is the field.
    const k = inputs();
    k.deposits = [{ ...k.deposits[0]!, amount: '5.0000000000', seq: 9, txId: '0xbb' }];
    expect(checkAccount(k).first).toMatchObject({ field: 'amount', message: expect.stringMatching(/the amount: .*; the seq: recorded at seq 9, credited to your balance at seq 1; the chain transaction: /) });
  });

  it('an approved withdrawal never debited is named; one newer than the commitment is pending, apart from the verified numbers', () => {
    const i = inputs();
    i.withdrawals = [...i.withdrawals, { ...i.withdrawals[0]!, withdrawalId: 'w-ghost', decidedSeq: 3 }];
    expect(checkAccount(i).first).toMatchObject({ kind: 'withdrawal', withdrawalId: 'w-ghost', message: 'withdrawal w-ghost of 10.0000000000 was approved but never debited' });
    const j = inputs();
    j.withdrawals = [...j.withdrawals, { ...j.withdrawals[0]!, withdrawalId: 'w-later', decidedSeq: 10_000 }];
    j.account = { ...j.account, asOfSeq: 10_000 };
    const v = checkAccount(j);
    expect(v.problems).toEqual([]);
    // Every number is verified as of the commitment: verified there, the withdrawal after it reported apart.
    expect(v).toMatchObject({ status: 'verified', pendingAfterSeq: v.committedSeq, pendingCount: 1, withdrawals: { approved: 2, debited: 1, pending: 1 } });
    expect(v.pending).toEqual([{ what: 'withdrawals', count: 1, message: '1 approved withdrawal(s) not committed yet' }]);
  });

  it('a view number as of the committed history must be equal; a newer one is pending', () => {
    const i = inputs();
    i.account = { ...i.account, collateral: '1.0000000000' };
    expect(checkAccount(i)).toMatchObject({ status: 'failed', collateral: { status: 'different', shown: '1.0000000000' }, first: { kind: 'view', field: 'collateral' } });
    const j = inputs();
    j.account = { ...j.account, collateral: '1.0000000000', collateralAsOfSeq: 10_000, asOfSeq: 10_000 };
    const v = checkAccount(j);
    expect(v.problems).toEqual([]);
    // No record as of the commitment: the newer collateral could not be verified at all.
    expect(v).toMatchObject({ status: 'pending', pendingAfterSeq: v.committedSeq, pendingCount: 1, collateral: { status: 'pending' } });
    const k = inputs();
    k.openPositions = [];
    expect(checkAccount(k).first).toMatchObject({ kind: 'view', source: 'positions', field: 'position', market: 'ETH-PERP', message: "your ETH-PERP position (1.0000000000 size) is missing from the gateway's positions list" });
  });

  /** The gateway's record as of the last committed event, equal to the replay (made from the view the fixture built). */
  function recordOf(i: AccountInputs): AccountAsOf {
    const last = i.proofs!.get(1)!.events.at(-1)!.seq;
    const p = i.openPositions[0]!;
    return {
      party: A, asOfSeq: last, head: last, collateral: i.account.collateral, collateralAsOfSeq: i.account.collateralAsOfSeq,
      positions: [{ positionId: p.positionId, market: p.market, size: p.size, entryPrice: p.entryPrice, realizedPnl: p.realizedPnl, asOfSeq: p.updatedSeq }],
    };
  }
  /** The party kept trading after its commitment: every number of the current view is newer (and different). */
  function movedOn(i: AccountInputs): void {
    i.account = {
      ...i.account, asOfSeq: 10_000, collateral: '5.0000000000', collateralAsOfSeq: 10_000,
      positions: i.account.positions.map((p) => ({ ...p, size: '3.0000000000', asOfSeq: 10_000 })),
    };
    i.openPositions = i.openPositions.map((p) => ({ ...p, size: '3.0000000000', updatedSeq: 10_000 }));
  }

  it('with the record as of the commitment, a party whose view moved on is verified there and the newer numbers are named', () => {
    const i = inputs();
    i.accountAsOf = recordOf(i);
    movedOn(i);
    const v = checkAccount(i);
    expect(v.problems).toEqual([]);
    expect(v.viewAsOfSeq).toBe(v.committedSeq);
    expect(v.collateral).toEqual({ status: 'verified', recomputed: i.accountAsOf.collateral, shown: i.accountAsOf.collateral, latest: { shown: '5.0000000000', seq: 10_000 } });
    expect(v.positions[0]).toMatchObject({ size: { status: 'verified', shown: '1.0000000000', latest: { shown: '3.0000000000', seq: 10_000 } }, entryPrice: { status: 'verified' } });
    expect(v.pending.map((p) => p.what)).toEqual(['collateral', 'position']);
    expect(v.pending[0]!.message).toMatch(/not committed yet; your collateral at your last commitment \(seq \d+\) is verified$/);
    // Verified up to the commitment; the two newer numbers reported apart (ADR 0182).
    expect(v).toMatchObject({ status: 'verified', pendingAfterSeq: v.committedSeq, pendingCount: 2 });
    // Without the record, the same view leaves everything pending (what ADR 0147 did).
    const j = inputs();
    movedOn(j);
    expect(checkAccount(j)).toMatchObject({ status: 'pending', viewAsOfSeq: null, collateral: { status: 'pending' }, positions: [{ size: { status: 'pending' } }] });
  });

  it('a record as of the commitment that differs is named, whatever the current view shows', () => {
    const i = inputs();
    i.accountAsOf = { ...recordOf(i), collateral: '1.0000000000' };
    movedOn(i);
    const v = checkAccount(i);
    // A difference is `failed` whatever is pending beside it.
    expect(v).toMatchObject({ status: 'failed', pendingAfterSeq: v.committedSeq, pendingCount: 2, collateral: { status: 'different', shown: '1.0000000000' } });
    expect(v.first).toMatchObject({ kind: 'view', source: 'account-as-of', field: 'collateral', actual: '1.0000000000', message: expect.stringMatching(/^your collateral at your last commitment \(seq \d+\) should be \S+ from the committed events, the gateway's record of it shows 1\.0000000000$/) });
    const j = inputs();
    const r = recordOf(j);
    j.accountAsOf = { ...r, positions: [{ ...r.positions[0]!, entryPrice: '2000.0000000001' }] };
    expect(checkAccount(j).first).toMatchObject({ kind: 'view', source: 'account-as-of', field: 'entryPrice', market: 'ETH-PERP', expected: '2000.0000000000', actual: '2000.0000000001' });
    const k = inputs();
    k.accountAsOf = { ...recordOf(k), positions: [] };
    expect(checkAccount(k).first).toMatchObject({ kind: 'view', source: 'account-as-of', field: 'position', market: 'ETH-PERP', message: expect.stringMatching(/is missing from the gateway's record at your last commitment/) });
    const l = inputs();
    const rl = recordOf(l);
    l.accountAsOf = { ...rl, positions: [{ ...rl.positions[0]!, positionId: 'p-other' }] };
    expect(checkAccount(l).first).toMatchObject({ kind: 'view', source: 'account-as-of', field: 'position', expected: rl.positions[0]!.positionId, actual: 'p-other' });
  });

  it('a record as of another seq than the last committed event is not used', () => {
    const i = inputs();
    i.accountAsOf = { ...recordOf(i), asOfSeq: 1, collateral: '1.0000000000' };
    const v = checkAccount(i);
    expect(v).toMatchObject({ status: 'verified', viewAsOfSeq: null });
  });
});
