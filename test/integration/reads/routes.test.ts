// Every REST read against hand-written rows: exact bodies, filters, ordering, shapes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { A, B, C, OPERATOR, insertFixtures, ts } from './fixtures.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  await insertFixtures(db.sql);
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

async function get(url: string) {
  const res = await gw.app.inject(url);
  return { status: res.statusCode, body: res.json() };
}
const ids = (body: { items: Array<Record<string, unknown>> }, key: string) => body.items.map((i) => i[key]);

describe('vaults', () => {
  const vault = {
    operator: OPERATOR,
    contractId: 'contract-1',
    totalDeposits: '150000.0000000000',
    totalWithdrawals: '250.0000000000',
    balance: '149750.0000000000',
    userCount: 2,
    updatedSeq: 12,
    updatedAt: ts(12),
  };
  it('/v1/vault is the only vault', async () => {
    expect(await get('/v1/vault')).toEqual({ status: 200, body: vault });
  });
  it('/v1/vaults lists every vault on one page', async () => {
    expect(await get('/v1/vaults')).toEqual({ status: 200, body: { items: [vault], nextCursor: null } });
  });
  it('/v1/vaults/:operator finds it and 404s an unknown operator', async () => {
    expect(await get(`/v1/vaults/${OPERATOR}`)).toEqual({ status: 200, body: vault });
    expect(await get('/v1/vaults/nobody')).toEqual({ status: 404, body: { error: 'no vault for operator nobody', code: 'not_found' } });
  });
});

describe('collateral', () => {
  it('deposits newest first, filtered by user, paginated by seq', async () => {
    const all = await get('/v1/deposits');
    expect(all.status).toBe(200);
    expect(ids(all.body, 'seq')).toEqual([3, 2, 1]);
    expect(all.body.items[2]).toEqual({ seq: 1, depositId: 'd-1', party: A, amount: '100000.0000000000', source: 'chain', txId: '0xaa', createdAt: ts(1) });
    expect(all.body.items[0].txId).toBeNull();
    expect(ids((await get(`/v1/deposits?user=${A}`)).body, 'seq')).toEqual([3, 1]);
    const p1 = await get('/v1/deposits?limit=2');
    expect([ids(p1.body, 'seq'), p1.body.nextCursor]).toEqual([[3, 2], 2]);
    const p2 = await get('/v1/deposits?limit=2&before=2');
    expect([ids(p2.body, 'seq'), p2.body.nextCursor]).toEqual([[1], null]);
    expect(ids((await get(`/v1/users/${A}/deposits?before=3`)).body, 'seq')).toEqual([1]);
  });

  it('withdrawals by user and status, with the counter', async () => {
    expect(ids((await get('/v1/withdrawals')).body, 'withdrawalId')).toEqual(['w-3', 'w-2', 'w-1']);
    expect(ids((await get('/v1/withdrawals?status=requested')).body, 'withdrawalId')).toEqual(['w-3']);
    const rejected = await get(`/v1/users/${A}/withdrawals?status=rejected`);
    expect(rejected.body).toEqual({
      items: [{
        seq: 11, withdrawalId: 'w-2', party: A, amount: '99999.0000000000', nonce: 2, status: 'rejected',
        reason: 'insufficient free collateral', decidedSeq: 13, createdAt: ts(11), decidedAt: ts(13),
      }],
      nextCursor: null,
    });
    expect(ids((await get(`/v1/withdrawals?user=${B}&status=approved`)).body, 'seq')).toEqual([]);
    expect((await get(`/v1/users/${A}/withdrawal-counter`)).body).toEqual({ party: A, nonce: 2 });
    expect((await get(`/v1/users/${C}/withdrawal-counter`)).body).toEqual({ party: C, nonce: 0 });
  });
});

describe('batches', () => {
  it('manifests newest first, one by number, 404 when absent', async () => {
    const list = await get('/v1/batches?limit=1');
    expect(list.body).toEqual({
      items: [{ batchNum: 2, root: 'x2'.repeat(32), prevRoot: 'r1'.repeat(32), userBatchCount: 1, firstSeq: 53, lastSeq: 59, txId: '0xb2', committedAt: ts(62) }],
      nextCursor: 2,
    });
    expect(ids((await get('/v1/batches?before=2')).body, 'batchNum')).toEqual([1]);
    expect((await get('/v1/batches/1')).body.root).toBe('r1'.repeat(32));
    expect(await get('/v1/batches/9')).toEqual({ status: 404, body: { error: 'no batch 9', code: 'not_found' } });
  });

  it('user batches: all newest batch first by batchNum, one party oldest first', async () => {
    const all = await get('/v1/user-batches');
    expect(all.body.items.map((u: { party: string; userSeq: number }) => [u.party, u.userSeq])).toEqual([[A, 2], [A, 1], [B, 1]]);
    expect(all.body.nextCursor).toBeNull();
    // limit 2 falls inside batch 1 (two user batches): both come.
    const p1 = await get('/v1/user-batches?limit=2');
    expect([p1.body.items.length, p1.body.nextCursor]).toEqual([3, null]);
    // The cursor is a batchNum (an integer key of the contract's user_batches (batch_num) index).
    const p0 = await get('/v1/user-batches?limit=1');
    expect([p0.body.items.map((u: { batchNum: number }) => u.batchNum), p0.body.nextCursor]).toEqual([[2], 2]);
    const rest = await get(`/v1/user-batches?limit=1&before=${p0.body.nextCursor}`);
    expect(rest.body.items.map((u: { party: string; batchNum: number }) => [u.party, u.batchNum])).toEqual([[A, 1], [B, 1]]);
    expect(rest.body.nextCursor).toBeNull();
    expect(await get('/v1/user-batches?before=1')).toEqual({ status: 200, body: { items: [], nextCursor: null } });
  });

  it('user batches not yet in a manifest (batchNum null) are only in the party chain', async () => {
    await db.sql`INSERT INTO user_batches (party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at)
      VALUES (${C}, 1, NULL, ${'uc'.repeat(32)}, ${'00'.repeat(32)}, 2, '0xu9', ${ts(80)})`;
    try {
      expect(ids((await get('/v1/user-batches')).body, 'party')).toEqual([A, A, B]);
      const p0 = await get('/v1/user-batches?limit=1');
      expect([ids(p0.body, 'batchNum'), p0.body.nextCursor]).toEqual([[2], 2]);
      expect((await get(`/v1/users/${C}/user-batches`)).body).toEqual({
        items: [{ party: C, userSeq: 1, batchNum: null, root: 'uc'.repeat(32), prevRoot: '00'.repeat(32), eventCount: 2, txId: '0xu9', committedAt: ts(80) }],
        nextCursor: null,
      });
    } finally {
      await db.sql`DELETE FROM user_batches WHERE party = ${C}`;
    }
  });

  it('user batches of one party, oldest first', async () => {
    const mine = await get(`/v1/users/${A}/user-batches`);
    expect(mine.body.items).toEqual([
      { party: A, userSeq: 1, batchNum: 1, root: 'ua'.repeat(32), prevRoot: '00'.repeat(32), eventCount: 9, txId: '0xu1', committedAt: ts(52) },
      { party: A, userSeq: 2, batchNum: 2, root: 'bad0'.repeat(16), prevRoot: 'ua'.repeat(32), eventCount: 1, txId: '0xu3', committedAt: ts(62) },
    ]);
    const after = await get(`/v1/users/${A}/user-batches?limit=1`);
    expect([ids(after.body, 'userSeq'), after.body.nextCursor]).toEqual([[1], 1]);
    expect(ids((await get(`/v1/users/${A}/user-batches?since=1`)).body, 'userSeq')).toEqual([2]);
  });
});

describe('mirror', () => {
  it('orders: every v2 field, filters by user, market and status', async () => {
    const res = await get('/v1/orders?status=filled&market=BTC-PERP');
    expect(ids(res.body, 'orderId')).toEqual(['o-2', 'o-1']);
    expect(res.body.items[1]).toEqual({
      orderId: 'o-1', party: A, market: 'BTC-PERP', side: 'buy', type: 'limit', tif: 'gtc', price: '65000.0000000000',
      size: '0.5000000000', filledSize: '0.5000000000', avgPrice: '65000.0000000000', status: 'filled', clientOrderId: 'c-1',
      reduceOnly: false, tpTriggerPrice: '70000.0000000000', tpLimitPrice: null, tpSize: null, slTriggerPrice: '60000.0000000000',
      slLimitPrice: '59900.0000000000', slSize: '0.5000000000', createdSeq: 20, updatedSeq: 21, createdAt: ts(20), updatedAt: ts(21),
    });
    expect(ids((await get('/v1/orders')).body, 'orderId')).toEqual(['o-6', 'o-7', 'o-5', 'o-4', 'o-3', 'o-2', 'o-1']);
    expect(ids((await get(`/v1/orders?user=${B}`)).body, 'orderId')).toEqual(['o-7', 'o-2']);
    expect(ids((await get(`/v1/orders?user=${A}&status=partially_filled`)).body, 'orderId')).toEqual(['o-4']);
    expect(ids((await get('/v1/orders?market=btc-perp')).body, 'orderId')).toEqual([]);
    expect(ids((await get('/v1/orders?limit=2&before=33')).body, 'orderId')).toEqual(['o-5', 'o-4']);
  });

  it('fills: legs in order, a flip has a closing and an opening leg, filters', async () => {
    const res = await get('/v1/fills');
    expect(ids(res.body, 'fillId')).toEqual(['40-0', '40-1', '40-2', '33-0', '33-1', '21-0', '21-1']);
    expect(res.body.items[1]).toEqual({
      fillId: '40-1', seq: 40, leg: 1, matchId: 'm-3', orderId: 'o-9', party: A, market: 'BTC-PERP', side: 'sell', role: 'maker',
      size: '0.5000000000', price: '66000.0000000000', fee: '0.0000000000', realizedPnl: '500.0000000000', newBalance: '101250.0000000000',
      positionId: 'pos-a1', createdAt: ts(40),
    });
    expect(ids((await get(`/v1/users/${A}/fills?market=BTC-PERP`)).body, 'fillId')).toEqual(['40-1', '40-2', '21-1']);
    expect(ids((await get(`/v1/fills?user=${B}&market=ETH-PERP`)).body, 'fillId')).toEqual(['33-0']);
    expect(ids((await get('/v1/fills?before=40&market=ETH-PERP')).body, 'fillId')).toEqual(['33-0', '33-1']);
  });

  it('fills: a page extends past limit to keep an event whole, the next page starts at the next event', async () => {
    const p1 = await get('/v1/fills?limit=2');
    expect([ids(p1.body, 'fillId'), p1.body.nextCursor]).toEqual([['40-0', '40-1', '40-2'], 40]);
    const p2 = await get('/v1/fills?limit=2&before=40');
    expect([ids(p2.body, 'fillId'), p2.body.nextCursor]).toEqual([['33-0', '33-1'], 33]);
    const p3 = await get('/v1/fills?limit=2&before=33');
    expect([ids(p3.body, 'fillId'), p3.body.nextCursor]).toEqual([['21-0', '21-1'], null]);
  });

  it('positions: open by default, closed epochs, all, market filter', async () => {
    const open = await get(`/v1/users/${A}/positions`);
    expect(ids(open.body, 'positionId')).toEqual(['pos-a3', 'pos-a2']);
    expect(open.body.items[0]).toEqual({
      positionId: 'pos-a3', party: A, market: 'BTC-PERP', size: '-0.3000000000', entryPrice: '66000.0000000000', realizedPnl: '0.0000000000',
      status: 'open', openedSeq: 40, updatedSeq: 40, closedSeq: null, openedAt: ts(40), updatedAt: ts(40), closedAt: null,
    });
    const closed = await get(`/v1/users/${A}/positions?status=closed`);
    expect(closed.body.items.map((p: { positionId: string; size: string; closedSeq: number }) => [p.positionId, p.size, p.closedSeq])).toEqual([
      ['pos-a1', '0.0000000000', 40],
    ]);
    expect(ids((await get(`/v1/users/${A}/positions?status=all`)).body, 'positionId')).toEqual(['pos-a1', 'pos-a3', 'pos-a2']);
    // The flip's two epochs share updatedSeq 40: limit 1 keeps them together.
    const p1 = await get(`/v1/users/${A}/positions?status=all&limit=1`);
    expect([ids(p1.body, 'positionId'), p1.body.nextCursor]).toEqual([['pos-a1', 'pos-a3'], 40]);
    expect(ids((await get(`/v1/users/${A}/positions?status=all&market=ETH-PERP`)).body, 'positionId')).toEqual(['pos-a2']);
  });

  it('triggers: v2 fields, status and market filters', async () => {
    const res = await get(`/v1/users/${A}/triggers`);
    expect(ids(res.body, 'triggerId')).toEqual(['t-3', 't-2', 't-1']);
    expect(res.body.items[0]).toEqual({
      triggerId: 't-3', party: A, market: 'ETH-PERP', kind: 'sl', status: 'fired', triggerPrice: '3400.0000000000', limitPrice: '3410.0000000000',
      size: '0.5000000000', firedSize: '0.5000000000', firedLimit: '3410.0000000000', positionId: 'pos-a2', parentOrderId: 'o-4',
      firedOrderId: 'o-10', createdSeq: 44, updatedSeq: 45, createdAt: ts(44), updatedAt: ts(45),
    });
    expect(ids((await get(`/v1/users/${A}/triggers?status=armed`)).body, 'triggerId')).toEqual(['t-1']);
    expect(ids((await get(`/v1/users/${A}/triggers?market=BTC-PERP&status=cancelled`)).body, 'triggerId')).toEqual(['t-2']);
    expect(ids((await get(`/v1/users/${B}/triggers`)).body, 'triggerId')).toEqual([]);
  });

  it('balance is newBalance of the last leg; zero and null without a fill', async () => {
    expect((await get(`/v1/users/${A}/balance`)).body).toEqual({ party: A, balance: '101250.0000000000', asOfSeq: 40 });
    expect((await get(`/v1/users/${B}/balance`)).body).toEqual({ party: B, balance: '50456.5250000000', asOfSeq: 40 });
    expect((await get(`/v1/users/${C}/balance`)).body).toEqual({ party: C, balance: '0.0000000000', asOfSeq: null });
  });
});

describe('verifications', () => {
  it('user batches: match, mismatch, pending, newest claim first', async () => {
    const res = await get('/v1/verifications/user-batches');
    expect(res.body).toEqual({
      items: [
        { party: B, userSeq: 2, engineRoot: 'ub2'.padEnd(64, '0'), chainRoot: null, status: 'pending', engineSeq: 70, committedAt: null },
        { party: A, userSeq: 2, engineRoot: 'ua2'.padEnd(64, '0'), chainRoot: 'bad0'.repeat(16), status: 'mismatch', engineSeq: 60, committedAt: ts(62) },
        { party: B, userSeq: 1, engineRoot: 'ub'.repeat(32), chainRoot: 'ub'.repeat(32), status: 'match', engineSeq: 51, committedAt: ts(52) },
        { party: A, userSeq: 1, engineRoot: 'ua'.repeat(32), chainRoot: 'ua'.repeat(32), status: 'match', engineSeq: 50, committedAt: ts(52) },
      ],
      nextCursor: null,
    });
    expect(ids((await get('/v1/verifications/user-batches?status=mismatch')).body, 'engineSeq')).toEqual([60]);
    expect(ids((await get('/v1/verifications/user-batches?status=match')).body, 'engineSeq')).toEqual([51, 50]);
    expect(ids((await get(`/v1/verifications/user-batches?user=${A}`)).body, 'engineSeq')).toEqual([60, 50]);
    expect(ids((await get(`/v1/verifications/user-batches?user=${B}&status=pending`)).body, 'engineSeq')).toEqual([70]);
    const p = await get('/v1/verifications/user-batches?limit=3');
    expect([ids(p.body, 'engineSeq'), p.body.nextCursor]).toEqual([[70, 60, 51], 51]);
    expect(ids((await get('/v1/verifications/user-batches?before=51')).body, 'engineSeq')).toEqual([50]);
  });

  it('a status filter answers a full page in one request; statuses follow the chain, a new gateway sees them at once', async () => {
    const page = async (app: TestGateway, q: string) => {
      const body = (await app.app.inject(`/v1/verifications/${q}`)).json();
      return [ids(body, 'engineSeq'), body.nextCursor];
    };
    expect(await page(gw, 'user-batches?status=match&limit=1')).toEqual([[51], 51]);
    expect(await page(gw, 'user-batches?status=match&limit=1&before=51')).toEqual([[50], null]);
    expect(await page(gw, 'user-batches?status=mismatch&limit=1')).toEqual([[60], null]);
    expect(await page(gw, 'user-batches?status=pending&before=70')).toEqual([[], null]);
    expect(await page(gw, `user-batches?status=match&user=${A}`)).toEqual([[50], null]);
    expect(await page(gw, `user-batches?status=match&user=${C}`)).toEqual([[], null]);
    expect(await page(gw, 'manifests?status=pending&limit=1')).toEqual([[71], null]);
    expect(await page(gw, 'manifests?status=match')).toEqual([[52], null]);
    // A second gateway, started fresh: the chain records B's pending user batch with another root, then the
    // engine claims A's next user batch. (Undone at the end: the shared gateway never sees this state.)
    const fresh = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
    try {
      expect(await page(fresh, 'user-batches?status=pending')).toEqual([[70], null]);
      await db.sql`INSERT INTO user_batches (party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at)
        VALUES (${B}, 2, NULL, ${'ff'.repeat(32)}, ${'ub'.repeat(32)}, 3, NULL, ${ts(75)})`;
      await db.sql`INSERT INTO events (seq, kind, ts, market, party, payload) VALUES
        (80, 'engine.user_batch_committed', ${ts(80)}, NULL, ${A}, ${db.sql.json({ userSeq: 3, root: 'ua3'.padEnd(64, '0'), prevRoot: 'x', eventCount: 1 })})`;
      expect(await page(fresh, 'user-batches?status=pending')).toEqual([[80], null]);
      expect(await page(fresh, 'user-batches?status=mismatch')).toEqual([[70, 60], null]);
      expect(await page(fresh, 'user-batches?status=mismatch&limit=1')).toEqual([[70], 70]);
    } finally {
      await fresh.close();
      await db.sql`DELETE FROM events WHERE seq = 80`;
      await db.sql`DELETE FROM user_batches WHERE party = ${B} AND user_seq = 2`;
    }
    expect(await page(gw, 'user-batches?status=pending')).toEqual([[70], null]);
  });

  it('manifests: batch 2 mismatches, batch 3 is pending', async () => {
    const res = await get('/v1/verifications/manifests');
    expect(res.body.items).toEqual([
      { batchNum: 3, engineRoot: 'r3'.repeat(32), chainRoot: null, status: 'pending', engineSeq: 71, committedAt: null },
      { batchNum: 2, engineRoot: 'r2'.repeat(32), chainRoot: 'x2'.repeat(32), status: 'mismatch', engineSeq: 61, committedAt: ts(62) },
      { batchNum: 1, engineRoot: 'r1'.repeat(32), chainRoot: 'r1'.repeat(32), status: 'match', engineSeq: 52, committedAt: ts(52) },
    ]);
    expect(ids((await get('/v1/verifications/manifests?status=mismatch')).body, 'batchNum')).toEqual([2]);
    expect(ids((await get('/v1/verifications/manifests?status=pending')).body, 'batchNum')).toEqual([3]);
  });
});

describe('events', () => {
  it('rebuilds the engine envelope, omitting null market/party, oldest first', async () => {
    const res = await get('/v1/events?limit=3');
    expect(res.body).toEqual({
      items: [
        { seq: 1, kind: 'inbound.deposit', ts: ts(1), party: A, payload: { depositId: 'd-1', amount: '100000.0000000000', source: 'chain', txId: '0xaa', newBalance: '100000.0000000000' } },
        { seq: 2, kind: 'inbound.deposit', ts: ts(2), party: B, payload: { depositId: 'd-2', amount: '50000.0000000000', source: 'chain', txId: '0xbb', newBalance: '50000.0000000000' } },
        { seq: 20, kind: 'engine.order_placed', ts: ts(20), market: 'BTC-PERP', party: A, payload: { order: { orderId: 'o-1' } } },
      ],
      nextCursor: 20,
    });
    const next = await get('/v1/events?since=20&limit=2');
    expect(next.body.items[1]).toEqual({ seq: 22, kind: 'engine.tick_start', ts: ts(22), payload: { tick: 7 } });
    expect(Object.keys(next.body.items[0]).sort()).toEqual(['kind', 'market', 'payload', 'seq', 'ts']);
    expect(ids((await get('/v1/events?type=outbound.batch_committed')).body, 'seq')).toEqual([52, 61, 71]);
    expect(ids((await get(`/v1/events?user=${A}&type=engine.user_batch_committed&since=50`)).body, 'seq')).toEqual([60]);
    expect(ids((await get('/v1/events?market=BTC-PERP')).body, 'seq')).toEqual([20, 21, 40]);
    expect(await get('/v1/events?since=71')).toEqual({ status: 200, body: { items: [], nextCursor: null } });
  });
});

describe('events of a user (reconnect backfill)', () => {
  it("user=P returns P's own events and the fill events in which P has a leg, each once", async () => {
    // B: deposits/claims (party B) and the fills 21, 33, 40 (B's legs are inside payload.legs).
    expect(ids((await get(`/v1/events?user=${B}`)).body, 'seq')).toEqual([2, 21, 33, 40, 51, 70]);
    // A has two legs in seq 40: the event appears once.
    const a = await get(`/v1/events?user=${A}`);
    expect(ids(a.body, 'seq')).toEqual([1, 20, 21, 33, 40, 50, 60]);
    expect(a.body.items[4]).toEqual({
      seq: 40, kind: 'engine.order_filled', ts: ts(40), market: 'BTC-PERP',
      payload: expect.objectContaining({ matchId: 'm-3', legs: expect.arrayContaining([expect.objectContaining({ party: A })]) }),
    });
    expect(ids((await get(`/v1/events?user=${C}`)).body, 'seq')).toEqual([]);
  });

  it('keeps type, market, since, limit and nextCursor semantics', async () => {
    expect(ids((await get(`/v1/events?user=${A}&type=engine.order_filled`)).body, 'seq')).toEqual([21, 33, 40]);
    expect(ids((await get(`/v1/events?user=${A}&type=inbound.deposit`)).body, 'seq')).toEqual([1]);
    expect(ids((await get(`/v1/events?user=${A}&market=BTC-PERP`)).body, 'seq')).toEqual([20, 21, 40]);
    expect(ids((await get(`/v1/events?user=${A}&since=21`)).body, 'seq')).toEqual([33, 40, 50, 60]);
    // Walk A's events two at a time: mixed own events and fill events, no repeat, no loss.
    const pages: Array<[unknown[], unknown]> = [];
    let url = `/v1/events?user=${A}&limit=2`;
    for (;;) {
      const { body } = await get(url);
      pages.push([ids(body, 'seq'), body.nextCursor]);
      if (body.nextCursor === null) break;
      url = `/v1/events?user=${A}&limit=2&since=${body.nextCursor}`;
    }
    expect(pages).toEqual([[[1, 20], 20], [[21, 33], 33], [[40, 50], 50], [[60], null]]);
    expect(await get(`/v1/events?user=${B}&since=40&limit=1`)).toEqual({ status: 200, body: { items: [expect.objectContaining({ seq: 51 })], nextCursor: 51 } });
  });
});

describe('vault choice', () => {
  it('several vaults without VAULT_OPERATOR: 404 naming the fix; VAULT_OPERATOR picks one', async () => {
    await db.sql`INSERT INTO vaults (operator, contract_id, updated_seq, updated_at) VALUES ('zz-second', 'contract-2', 1, ${ts(1)})`;
    try {
      expect(await get('/v1/vault')).toEqual({
        status: 404,
        body: { error: 'several vaults exist and VAULT_OPERATOR is not set; use /v1/vaults/{operator}', code: 'not_found' },
      });
      const picked = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true', VAULT_OPERATOR: 'zz-second' });
      try {
        const res = await picked.app.inject('/v1/vault');
        expect(res.json()).toMatchObject({ operator: 'zz-second', contractId: 'contract-2', balance: '0.0000000000', userCount: 0 });
        const missing = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true', VAULT_OPERATOR: 'ghost' });
        expect((await missing.app.inject('/v1/vault')).statusCode).toBe(404);
        await missing.close();
      } finally {
        await picked.close();
      }
      expect(ids((await get('/v1/vaults')).body, 'operator')).toEqual([OPERATOR, 'zz-second']);
    } finally {
      await db.sql`DELETE FROM vaults WHERE operator = 'zz-second'`;
    }
  });
});
