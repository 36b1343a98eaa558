// Hand-written indexer rows with known values, so read tests can assert exact bodies.
import { Writable } from 'node:stream';
import pino from 'pino';
import type postgres from 'postgres';

export const A = `alice::${'a1'.repeat(32)}`;
export const B = `bob::${'b2'.repeat(32)}`;
export const C = `carol::${'c3'.repeat(32)}`; // no activity at all
export const OPERATOR = `operator::${'0f'.repeat(32)}`;

const T = (seq: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, 0) + seq * 1000).toISOString();
export const ts = T;

/** Inserts the fixture data set (needs the full schema, 0015). */
export async function insertFixtures(sql: postgres.Sql): Promise<void> {
  await sql`INSERT INTO markets (symbol, sz_decimals, min_notional, max_leverage, status) VALUES
    ('BTC-PERP', 4, 10, 20, 'active'), ('ETH-PERP', 3, 10, 20, 'active')`;
  await sql`INSERT INTO vaults (operator, contract_id, total_deposits, total_withdrawals, balance, user_count, updated_seq, updated_at)
    VALUES (${OPERATOR}, 'contract-1', 150000, 250, 149750, 2, 12, ${T(12)})`;
  await sql`INSERT INTO deposits (seq, deposit_id, party, amount, source, tx_id, created_at) VALUES
    (1, 'd-1', ${A}, 100000, 'chain', '0xaa', ${T(1)}),
    (2, 'd-2', ${B}, 50000, 'chain', '0xbb', ${T(2)}),
    (3, 'd-3', ${A}, 1000, 'faucet', NULL, ${T(3)})`;
  await sql`INSERT INTO withdrawals (seq, withdrawal_id, party, amount, nonce, status, reason, decided_seq, created_at, decided_at) VALUES
    (10, 'w-1', ${A}, 250, 1, 'approved', NULL, 12, ${T(10)}, ${T(12)}),
    (11, 'w-2', ${A}, 99999, 2, 'rejected', 'insufficient free collateral', 13, ${T(11)}, ${T(13)}),
    (14, 'w-3', ${B}, 5, 1, 'requested', NULL, NULL, ${T(14)}, NULL)`;
  await sql`INSERT INTO withdrawal_counters (party, nonce, updated_seq) VALUES (${A}, 2, 11), (${B}, 1, 14)`;
  // Orders: o-1 A buy rests then fills; o-2 B sell taker; o-3 A open (mirror) BTC; o-4 A partially filled ETH;
  // o-5 A cancelled; o-6 A rejected; o-7 B open.
  await sql`INSERT INTO orders (order_id, party, market, side, type, tif, price, size, filled_size, avg_price, status,
      client_order_id, created_seq, updated_seq, created_at, updated_at, reduce_only, tp_trigger_price, tp_limit_price, tp_size,
      sl_trigger_price, sl_limit_price, sl_size) VALUES
    ('o-1', ${A}, 'BTC-PERP', 'buy', 'limit', 'gtc', 65000, 0.5, 0.5, 65000, 'filled', 'c-1', 20, 21, ${T(20)}, ${T(21)}, false, 70000, NULL, NULL, 60000, 59900, 0.5),
    ('o-2', ${B}, 'BTC-PERP', 'sell', 'market', 'ioc', NULL, 0.5, 0.5, 65000, 'filled', NULL, 21, 21, ${T(21)}, ${T(21)}, false, NULL, NULL, NULL, NULL, NULL, NULL),
    ('o-3', ${A}, 'BTC-PERP', 'buy', 'limit', 'gtc', 64000, 0.1, 0, NULL, 'open', NULL, 30, 30, ${T(30)}, ${T(30)}, false, NULL, NULL, NULL, NULL, NULL, NULL),
    ('o-4', ${A}, 'ETH-PERP', 'sell', 'limit', 'gtc', 3300, 2, 0.5, 3300, 'partially_filled', NULL, 31, 33, ${T(31)}, ${T(33)}, true, NULL, NULL, NULL, NULL, NULL, NULL),
    ('o-5', ${A}, 'BTC-PERP', 'sell', 'limit', 'gtc', 70000, 0.2, 0, NULL, 'cancelled', NULL, 32, 34, ${T(32)}, ${T(34)}, false, NULL, NULL, NULL, NULL, NULL, NULL),
    ('o-6', ${A}, 'ETH-PERP', 'buy', 'limit', 'gtc', 3000, 0.0001, 0, NULL, 'rejected', 'c-6', 35, 35, ${T(35)}, ${T(35)}, false, NULL, NULL, NULL, NULL, NULL, NULL),
    ('o-7', ${B}, 'ETH-PERP', 'buy', 'limit', 'gtc', 3300, 0.5, 0.5, 3300, 'filled', NULL, 33, 33, ${T(33)}, ${T(33)}, false, NULL, NULL, NULL, NULL, NULL, NULL)`;
  // Fill events: seq 21 (A maker buys 0.5 BTC from B taker), seq 33 (B taker buys 0.5 ETH from A maker),
  // seq 40 (B taker buys 0.8 BTC from A maker: A flips long 0.5 -> short 0.3: closing + opening legs).
  await sql`INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl,
      new_balance, position_id, created_at) VALUES
    (21, 0, '21-0', 'm-1', 'o-2', ${B}, 'BTC-PERP', 'sell', 'taker', 0.5, 65000, 16.25, 0, 49983.75, 'pos-b1', ${T(21)}),
    (21, 1, '21-1', 'm-1', 'o-1', ${A}, 'BTC-PERP', 'buy', 'maker', 0.5, 65000, 0, 0, 100750, 'pos-a1', ${T(21)}),
    (33, 0, '33-0', 'm-2', 'o-7', ${B}, 'ETH-PERP', 'buy', 'taker', 0.5, 3300, 0.825, 0, 49982.925, 'pos-b2', ${T(33)}),
    (33, 1, '33-1', 'm-2', 'o-4', ${A}, 'ETH-PERP', 'sell', 'maker', 0.5, 3300, 0, 0, 100750, 'pos-a2', ${T(33)}),
    (40, 0, '40-0', 'm-3', 'o-8', ${B}, 'BTC-PERP', 'buy', 'taker', 0.8, 66000, 26.4, 500, 50456.525, 'pos-b1', ${T(40)}),
    (40, 1, '40-1', 'm-3', 'o-9', ${A}, 'BTC-PERP', 'sell', 'maker', 0.5, 66000, 0, 500, 101250, 'pos-a1', ${T(40)}),
    (40, 2, '40-2', 'm-3', 'o-9', ${A}, 'BTC-PERP', 'sell', 'maker', 0.3, 66000, 0, 0, 101250, 'pos-a3', ${T(40)})`;
  await sql`INSERT INTO positions (position_id, party, market, size, entry_price, realized_pnl, status, opened_seq, updated_seq,
      closed_seq, opened_at, updated_at, closed_at) VALUES
    ('pos-a1', ${A}, 'BTC-PERP', 0, 65000, 500, 'closed', 21, 40, 40, ${T(21)}, ${T(40)}, ${T(40)}),
    ('pos-a3', ${A}, 'BTC-PERP', -0.3, 66000, 0, 'open', 40, 40, NULL, ${T(40)}, ${T(40)}, NULL),
    ('pos-a2', ${A}, 'ETH-PERP', -0.5, 3300, 0, 'open', 33, 33, NULL, ${T(33)}, ${T(33)}, NULL),
    ('pos-b1', ${B}, 'BTC-PERP', 0.3, 66000, 500, 'open', 21, 40, NULL, ${T(21)}, ${T(40)}, NULL)`;
  await sql`INSERT INTO triggers (trigger_id, party, market, kind, status, trigger_price, position_id, parent_order_id, fired_order_id,
      created_seq, updated_seq, created_at, updated_at, size, limit_price, fired_size, fired_limit) VALUES
    ('t-1', ${A}, 'BTC-PERP', 'tp', 'armed', 60000, 'pos-a3', NULL, NULL, 41, 41, ${T(41)}, ${T(41)}, 0.1, 60100, NULL, NULL),
    ('t-2', ${A}, 'BTC-PERP', 'sl', 'cancelled', 70000, 'pos-a3', NULL, NULL, 42, 43, ${T(42)}, ${T(43)}, NULL, NULL, NULL, NULL),
    ('t-3', ${A}, 'ETH-PERP', 'sl', 'fired', 3400, 'pos-a2', 'o-4', 'o-10', 44, 45, ${T(44)}, ${T(45)}, 0.5, 3410, 0.5, 3410)`;
  await sql`INSERT INTO batches (batch_num, root, prev_root, user_batch_count, first_seq, last_seq, tx_id, committed_at) VALUES
    (1, ${'r1'.repeat(32)}, ${'00'.repeat(32)}, 2, 1, 49, '0xb1', ${T(52)}),
    (2, ${'x2'.repeat(32)}, ${'r1'.repeat(32)}, 1, 53, 59, '0xb2', ${T(62)})`;
  await sql`INSERT INTO user_batches (party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at) VALUES
    (${A}, 1, 1, ${'ua'.repeat(32)}, ${'00'.repeat(32)}, 9, '0xu1', ${T(52)}),
    (${B}, 1, 1, ${'ub'.repeat(32)}, ${'00'.repeat(32)}, 5, '0xu2', ${T(52)}),
    (${A}, 2, 2, ${'bad0'.repeat(16)}, ${'ua'.repeat(32)}, 1, '0xu3', ${T(62)})`;
  const ev = (seq: number, kind: string, market: string | null, party: string | null, payload: object) =>
    sql`INSERT INTO events (seq, kind, ts, market, party, payload) VALUES (${seq}, ${kind}, ${T(seq)}, ${market}, ${party}, ${sql.json(payload as never)})`;
  await ev(1, 'inbound.deposit', null, A, { depositId: 'd-1', amount: '100000.0000000000', source: 'chain', txId: '0xaa', newBalance: '100000.0000000000' });
  await ev(2, 'inbound.deposit', null, B, { depositId: 'd-2', amount: '50000.0000000000', source: 'chain', txId: '0xbb', newBalance: '50000.0000000000' });
  await ev(20, 'engine.order_placed', 'BTC-PERP', A, { order: { orderId: 'o-1' } });
  await ev(21, 'engine.order_filled', 'BTC-PERP', null, { matchId: 'm-1', price: '65000.0000000000', size: '0.5000000000', legs: [] });
  await ev(22, 'engine.tick_start', null, null, { tick: 7 });
  // Fill events carry no top-level party: the parties are in payload.legs (A has two legs in seq 40).
  await ev(33, 'engine.order_filled', 'ETH-PERP', null, { matchId: 'm-2', price: '3300.0000000000', size: '0.5000000000',
    legs: [{ party: B, orderId: 'o-7', role: 'taker' }, { party: A, orderId: 'o-4', role: 'maker' }] });
  await ev(40, 'engine.order_filled', 'BTC-PERP', null, { matchId: 'm-3', price: '66000.0000000000', size: '0.8000000000',
    legs: [{ party: B, orderId: 'o-8', role: 'taker' }, { party: A, orderId: 'o-9', role: 'maker' }, { party: A, orderId: 'o-9', role: 'maker' }] });
  // Engine claims: A#1 and B#1 in batch 1 (match), A#2 in batch 2 (chain root differs), B#2 in batch 3 (pending).
  await ev(50, 'engine.user_batch_committed', null, A, { userSeq: 1, root: 'ua'.repeat(32), prevRoot: '00'.repeat(32), eventCount: 9 });
  await ev(51, 'engine.user_batch_committed', null, B, { userSeq: 1, root: 'ub'.repeat(32), prevRoot: '00'.repeat(32), eventCount: 5 });
  await ev(52, 'outbound.batch_committed', null, null, { batchNum: 1, root: 'r1'.repeat(32), prevRoot: '00'.repeat(32), userBatchCount: 2, firstSeq: 1, lastSeq: 49 });
  await ev(60, 'engine.user_batch_committed', null, A, { userSeq: 2, root: 'ua2'.padEnd(64, '0'), prevRoot: 'ua'.repeat(32), eventCount: 1 });
  await ev(61, 'outbound.batch_committed', null, null, { batchNum: 2, root: 'r2'.repeat(32), prevRoot: 'r1'.repeat(32), userBatchCount: 1, firstSeq: 53, lastSeq: 59 });
  await ev(70, 'engine.user_batch_committed', null, B, { userSeq: 2, root: 'ub2'.padEnd(64, '0'), prevRoot: 'ub'.repeat(32), eventCount: 3 });
  await ev(71, 'outbound.batch_committed', null, null, { batchNum: 3, root: 'r3'.repeat(32), prevRoot: 'r2'.repeat(32), userBatchCount: 1, firstSeq: 62, lastSeq: 69 });
}

/** A pino logger whose lines the test can read back. */
export function captureLogger(): { logger: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'info' }, stream);
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
