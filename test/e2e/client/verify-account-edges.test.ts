// verifyAccount at the edges a trader meets first, through the real engine, indexer and gateway:
// a party with no events, only a deposit, a withdrawal approved and one refused, a position closed
// to exactly zero and one flipped through it, a self-trade. Each verdict must be what a careful
// trader expects: verified when everything is committed and equal, never failed for an honest engine.
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, type AccountVerdict } from '../../../packages/client/src/index.js';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { eventually } from '../../support/eventually.js';
import { formatDec } from '../../../sandbox/engine/decimal.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';

const party = (hint: string, digit: string) => `${hint}::${digit.repeat(64)}`;

describe('verifyAccount at the edges (honest engine)', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  let gateway: TestGateway;
  let client: GatewayClient;

  const stacks = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    stacks.onTestFinished(() => db.drop());
    engine = await testEngine(stacks);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
    stacks.onTestFinished(() => indexer.close());
    gateway = await testLiveGateway(stacks, engine, { DATABASE_URL: db.url, AUTH_DISABLED: 'true', RATE_LIMIT_MAX: '1000000' });
    client = new GatewayClient({ baseUrl: gateway.url, retry: { retries: 0 } });
  }, 60_000);

  const e = () => engine.engine;
  const order = (who: string, side: 'buy' | 'sell', size: string, price: string, tif = 'gtc') => {
    const r = e().placeOrder(who, { market: 'BTC-PERP', side, type: 'limit', size, price, tif });
    if (!r.ok) throw new Error(`${r.code}: ${r.error}`);
  };
  const trade = (taker: string, maker: string, side: 'buy' | 'sell', size: string, price: string) => {
    order(maker, side === 'buy' ? 'sell' : 'buy', size, price);
    order(taker, side, size, price, 'ioc');
  };
  async function settle(commit = true): Promise<void> {
    e().tick();
    if (commit) e().commit();
    const head = e().log.maxSeq;
    await indexer.waitFor(head, 30_000);
    await eventually(async () => (await client.getAccount(party('any', '0'))).asOfSeq >= head, { timeoutMs: 10_000, what: 'the account view at the head (stuck?)' });
  }
  const brief = (v: AccountVerdict) => ({ status: v.status, first: v.first, pending: v.pending, collateral: v.collateral, positions: v.positions });

  it('a party the engine never saw: nothing to check, nothing differs', async () => {
    await settle();
    const v = await client.verifyAccount(party('ghost', '1'));
    expect(brief(v)).toMatchObject({ status: 'verified', first: null, collateral: { status: 'verified', recomputed: '0.0000000000', shown: '0.0000000000' } });
    expect(v.events).toBe(0);
  });

  it('only a chain deposit, committed: verified, 1 of 1 credited', async () => {
    const who = party('dep', '2');
    e().deposit({ party: who, amount: '250.5', txId: `0x${'2'.repeat(64)}` }, 'chain');
    await settle();
    const v = await client.verifyAccount(who);
    expect(brief(v)).toMatchObject({ status: 'verified', first: null, collateral: { status: 'verified' } });
    expect(v.collateral.recomputed).toBe(formatDec(e().accounts.balance(who)));
    expect(v.deposits).toEqual({ receipts: 1, credited: 1, pending: 0 });
  });

  it('a deposit not committed yet: pending, not failed', async () => {
    const who = party('uncommitted', '3');
    e().deposit({ party: who, amount: '10', txId: `0x${'3'.repeat(64)}` }, 'chain');
    await settle(false);
    const v = await client.verifyAccount(who);
    expect(v.problems).toEqual([]);
    expect(v.status).toBe('pending');
  });

  it('a withdrawal approved and one refused: verified, the approved one debited once', async () => {
    const who = party('wd', '4');
    e().deposit({ party: who, amount: '100' }, 'faucet');
    e().requestWithdrawal(who, { amount: '40' });
    e().tick();
    e().requestWithdrawal(who, { amount: '1000' });
    await settle();
    const v = await client.verifyAccount(who);
    expect(brief(v)).toMatchObject({ status: 'verified', first: null, collateral: { status: 'verified', recomputed: '60.0000000000', shown: '60.0000000000' } });
    expect(v.withdrawals).toEqual({ approved: 1, debited: 1, pending: 0 });
  });

  it('a withdrawal of everything: verified at 0', async () => {
    const who = party('wdall', '5');
    e().deposit({ party: who, amount: '100' }, 'faucet');
    e().requestWithdrawal(who, { amount: '100' });
    await settle();
    const v = await client.verifyAccount(who);
    expect(brief(v)).toMatchObject({ status: 'verified', first: null, collateral: { status: 'verified', recomputed: '0.0000000000', shown: '0.0000000000' } });
  });

  it('a position closed to exactly zero, then one flipped through zero: verified', async () => {
    const a = party('flat', '6');
    const b = party('cpty', '7');
    for (const p of [a, b]) e().deposit({ party: p, amount: '1000000' }, 'faucet');
    trade(a, b, 'buy', '0.0100', '60000');
    trade(a, b, 'sell', '0.0100', '60100');
    await settle();
    let v = await client.verifyAccount(a);
    expect(brief(v)).toMatchObject({ status: 'verified', first: null, positions: [] });
    trade(a, b, 'buy', '0.0100', '60000');
    trade(a, b, 'sell', '0.0300', '59900');
    await settle();
    v = await client.verifyAccount(a);
    expect(brief(v)).toMatchObject({ status: 'verified', first: null });
    expect(v.positions).toHaveLength(1);
    expect(v.positions[0]!.size).toMatchObject({ status: 'verified', recomputed: '-0.0200000000' });
    expect(v.positions[0]!.entryPrice).toMatchObject({ status: 'verified', recomputed: '59900.0000000000' });
  });

  it('a self-trade only: verified (a taker fee, no position)', async () => {
    const who = party('self', '8');
    e().deposit({ party: who, amount: '1000' }, 'faucet');
    trade(who, who, 'buy', '0.0100', '60000');
    await settle();
    const v = await client.verifyAccount(who);
    expect(brief(v)).toMatchObject({ status: 'verified', first: null });
    expect(v.collateral.recomputed).toBe(formatDec(e().accounts.balance(who)));
    expect(v.legs).toBe(2);
    expect(v.positions).toEqual([]);
  });
});
