// The pure projection over a recorded event list, and the store writing it to a real database in
// batches of any size with the same result (and no change on a replay).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyEvent, chainTxId, corruptRoot, emptyChanges, emptyState, type ProjectionSettings } from '../../../sandbox/indexer/projection.js';
import { connect, IndexerStore, renderChanges } from '../../../sandbox/indexer/store.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { A, B, EVENTS, ts } from './recorded-events.js';
import { dumpTables } from './tables.js';

const settings: ProjectionSettings = { vaultOperator: 'operator-1', corruptUserBatch: 0, corruptBatch: 0 };

function project(events = EVENTS, s = settings) {
  const state = emptyState();
  const changes = emptyChanges();
  for (const e of events) applyEvent(state, changes, e, s);
  return { state, changes };
}

describe('projection (pure)', () => {
  const { state, changes } = project();

  it('tracks order fills, average price and status transitions', () => {
    expect(state.orders.get('o1')).toMatchObject({ filled_size: '2.0000000000', avg_price: '101.0000000000', status: 'filled', updated_seq: 10, created_seq: 4, client_order_id: 'bob-1' });
    expect(state.orders.get('o2')).toMatchObject({
      filled_size: '1.0000000000', avg_price: '100.0000000000', status: 'filled', price: null, tif: 'ioc', type: 'market',
      tp_trigger_price: '110.0000000000', tp_limit_price: null, tp_size: null, sl_trigger_price: null, updated_seq: 6,
    });
    // Partially filled by a flip's two maker legs (2 + 1), then cancelled by the user.
    expect(state.orders.get('o4')).toMatchObject({ filled_size: '3.0000000000', avg_price: '105.0000000000', status: 'cancelled', updated_seq: 16, updated_at: ts(16) });
    expect(state.orders.has('o5')).toBe(false); // never placed in this history: no row invented
    expect([...changes.orders].sort()).toEqual(['o1', 'o2', 'o3', 'o4']);
  });

  it('writes one fill row per leg with fill_id <seq>-<leg>', () => {
    expect(changes.fills.map((f) => f.fill_id)).toEqual(['6-0', '6-1', '10-0', '10-1', '12-0', '12-1', '12-2', '12-3']);
    expect(changes.fills[5]).toEqual({
      seq: 12, leg: 1, fill_id: '12-1', match_id: 'm3', order_id: 'o5', party: A, market: 'BTC-PERP', side: 'sell', role: 'taker',
      size: '1.0000000000', price: '105.0000000000', fee: '0.0525000000', realized_pnl: '0.0000000000', new_balance: '10007.7415000000',
      position_id: 'pA2', created_at: ts(12),
    });
  });

  it('closes the old epoch and opens a new one on a flip', () => {
    expect(state.positions.get('pA1')).toEqual({
      position_id: 'pA1', party: A, market: 'BTC-PERP', size: '0.0000000000', entry_price: '101.0000000000', realized_pnl: '8.0000000000',
      status: 'closed', opened_seq: 6, updated_seq: 12, closed_seq: 12, opened_at: ts(6), updated_at: ts(12), closed_at: ts(12),
    });
    expect(state.positions.get('pA2')).toMatchObject({ size: '-1.0000000000', entry_price: '105.0000000000', realized_pnl: '0.0000000000', status: 'open', opened_seq: 12, closed_seq: null });
    expect(state.positions.get('pB1')).toMatchObject({ status: 'closed', realized_pnl: '-8.0000000000' });
    expect(state.positions.get('pB2')).toMatchObject({ status: 'open', size: '1.0000000000' });
  });

  it('records the transaction id the engine committed, and never one of its own', () => {
    // An engine that broke the contract (a chain deposit without its transaction id) is recorded as
    // it committed: an id made up here would be a receipt that matches no credit.
    const [first] = EVENTS.filter((e) => e.kind === 'inbound.deposit');
    const bare = { ...first!, payload: { ...first!.payload, txId: null } };
    expect(project([bare]).changes.deposits.map((d) => d.tx_id)).toEqual([null]);
  });

  it('follows triggers through armed, cancelled and fired', () => {
    expect(state.triggers.get('t1')).toMatchObject({ status: 'cancelled', parent_order_id: 'o2', position_id: 'pA1', created_seq: 7, updated_seq: 13, size: null });
    expect(state.triggers.get('t2')).toEqual({
      trigger_id: 't2', party: B, market: 'BTC-PERP', kind: 'sl', status: 'fired', trigger_price: '104.0000000000', position_id: 'pB2',
      parent_order_id: null, fired_order_id: 'o6', created_seq: 14, updated_seq: 15, created_at: ts(14), updated_at: ts(15),
      size: '0.5000000000', limit_price: '103.5000000000', fired_size: '0.5000000000', fired_limit: '103.5000000000',
    });
  });

  it('plays the chain: deposits, withdrawals, counters, vault, batches', () => {
    expect(changes.deposits.map((d) => [d.deposit_id, d.source, d.amount, d.tx_id])).toEqual([
      ['d1', 'chain', '10000.0000000000', `0x${'d1'.repeat(32)}`],
      ['d2', 'faucet', '5000.5000000000', null],
    ]);
    expect(state.withdrawals.get('w1')).toMatchObject({ status: 'approved', decided_seq: 21, decided_at: ts(21), reason: null, nonce: 1 });
    expect(state.withdrawals.get('w2')).toMatchObject({ status: 'rejected', decided_seq: 22, reason: 'insufficient_collateral', nonce: 2 });
    expect(state.counters.get(A)).toEqual({ party: A, nonce: 2, updated_seq: 19 });
    expect(state.vault).toMatchObject({ operator: 'operator-1', total_deposits: '15000.5000000000', total_withdrawals: '100.0000000000', balance: '14900.5000000000', user_count: 2, updated_seq: 21 });
    expect([...changes.userBatches.values()].map((u) => [u.party, u.user_seq, u.batch_num, u.root])).toEqual([
      [A, 1, 1, 'ab'.repeat(32)],
      [B, 1, 1, 'cd'.repeat(32)],
    ]);
    expect(changes.batches).toEqual([{ batch_num: 1, root: 'ef'.repeat(32), prev_root: '0'.repeat(64), user_batch_count: 2, first_seq: 1, last_seq: 22, tx_id: chainTxId('batch:1'), committed_at: ts(25) }]);
    expect(changes.sessions).toEqual([{ session_id: 's1', party: A, public_key: 'c'.repeat(64), expires_at: '2026-11-21T11:00:00.000Z', created_seq: 1 }]);
  });

  it('corrupts exactly the configured user batch and manifest roots', () => {
    const { changes: c } = project(EVENTS, { ...settings, corruptUserBatch: 2, corruptBatch: 1 });
    const roots = [...c.userBatches.values()].map((u) => u.root);
    expect(roots).toEqual(['ab'.repeat(32), corruptRoot('cd'.repeat(32))]);
    expect(roots[1]).not.toBe('cd'.repeat(32));
    expect(roots[1]).toHaveLength(64);
    expect(c.batches[0]!.root).toBe(corruptRoot('ef'.repeat(32)));
  });

  it('keeps a malformed event in events and reports it instead of failing the batch', () => {
    const bad = { seq: 26, kind: 'engine.order_filled', ts: ts(26), market: 'BTC-PERP', payload: { matchId: 'm9', legs: 'nope' } };
    const { changes: c } = project([...EVENTS, bad]);
    expect(c.events).toHaveLength(26);
    expect(c.skipped).toEqual([{ seq: 26, kind: 'engine.order_filled', reason: 'legs must be an array' }]);
  });
});

describe('store (real database)', () => {
  let one: TestDatabase;
  let chunked: TestDatabase;
  beforeAll(async () => {
    one = await createTestDatabase();
    chunked = await createTestDatabase();
  });
  afterAll(async () => {
    await one?.drop();
    await chunked?.drop();
  });

  it('writes the same tables whether the history arrives in one batch or in several', async () => {
    const a = connect(one.url);
    const b = connect(chunked.url);
    try {
      const storeA = new IndexerStore(a, settings);
      expect((await storeA.apply(EVENTS)).applied).toBe(25);
      const storeB = new IndexerStore(b, settings);
      for (const [from, to] of [[0, 5], [5, 13], [13, 20], [20, 25]] as const) await storeB.apply(EVENTS.slice(from, to));
      const tablesA = await dumpTables(a);
      expect(await dumpTables(b)).toEqual(tablesA);
      expect(tablesA.events).toHaveLength(25);
      expect(tablesA.fills).toHaveLength(8);
      expect(tablesA.orders).toHaveLength(4);
      expect((tablesA.orders as Array<{ order_id: string; avg_price: string }>).find((o) => o.order_id === 'o1')!.avg_price).toBe(101);
      expect(tablesA.user_batches).toHaveLength(2);
      // The events row rebuilds the SSE envelope.
      expect((tablesA.events as Array<Record<string, unknown>>)[5]).toMatchObject({ seq: 6, kind: 'engine.order_filled', market: 'BTC-PERP', party: null });
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('is idempotent: re-applying the history, or re-running its writes, changes nothing', async () => {
    const a = connect(one.url);
    try {
      const before = await dumpTables(a);
      const fresh = new IndexerStore(a, settings); // a restarted indexer: high-water from the table
      expect(await fresh.apply(EVENTS)).toMatchObject({ applied: 0, lastSeq: 25 });
      // Bypass the high-water mark: the ON CONFLICT seq guards alone must keep the rows.
      const { state, changes } = project();
      await a.unsafe(renderChanges(state, changes)).simple();
      // An older view of a row (after seq 6 only) must not overwrite newer rows either.
      const early = project(EVENTS.slice(0, 8));
      await a.unsafe(renderChanges(early.state, early.changes)).simple();
      expect(await dumpTables(a)).toEqual(before);
    } finally {
      await a.end();
    }
  });
});
