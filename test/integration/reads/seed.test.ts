// The seed generator's data is consistent (every number follows from simulated trading) and
// deterministic (one seed number, one data set).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';

let db: TestDatabase;
let result: SeedResult;
const count = async (q: Promise<Array<{ n: string | number }>>) => Number((await q)[0]!.n);

beforeAll(async () => {
  db = await createTestDatabase();
  result = await seed(db.sql, { seed: 42, parties: 20, fills: 4_000, batchEvery: 400, copy: db.kind === 'postgres' });
}, 120_000);
afterAll(async () => db?.drop());

describe('seed data', () => {
  it('reports what it wrote', async () => {
    const { sql } = db;
    expect(result.counts.fills).toBeGreaterThanOrEqual(4_000);
    expect(result.counts.fills).toBe(await count(sql`SELECT count(*) AS n FROM fills`));
    expect(result.counts.orders).toBe(await count(sql`SELECT count(*) AS n FROM orders`));
    expect(result.counts.events).toBe(await count(sql`SELECT count(*) AS n FROM events`));
    expect(result.maxSeq).toBe(await count(sql`SELECT max(seq) AS n FROM events`));
    // seq is dense from 1: every event exists exactly once.
    expect(await count(sql`SELECT count(DISTINCT seq) AS n FROM events`)).toBe(result.maxSeq);
    expect(result.parties).toHaveLength(20);
    for (const p of result.parties) expect(p).toMatch(/^[a-z0-9][a-z0-9_-]{0,47}::[0-9a-f]{64}$/);
  });

  it('has every status of every lifecycle, both deposit sources, three markets', async () => {
    const { sql } = db;
    const values = async (q: Promise<Array<{ v: string }>>) => (await q).map((r) => r.v).sort();
    expect(await values(sql`SELECT DISTINCT status AS v FROM orders`)).toEqual(['cancelled', 'filled', 'open', 'partially_filled', 'rejected']);
    expect(await values(sql`SELECT DISTINCT status AS v FROM triggers`)).toEqual(['armed', 'cancelled', 'fired']);
    expect(await values(sql`SELECT DISTINCT status AS v FROM withdrawals`)).toEqual(['approved', 'rejected', 'requested']);
    expect(await values(sql`SELECT DISTINCT status AS v FROM positions`)).toEqual(['closed', 'open']);
    expect(await values(sql`SELECT DISTINCT source AS v FROM deposits`)).toEqual(['chain', 'faucet']);
    expect(await values(sql`SELECT DISTINCT market AS v FROM fills`)).toEqual(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']);
    expect(await count(sql`SELECT count(*) AS n FROM triggers WHERE parent_order_id IS NOT NULL`)).toBeGreaterThan(0);
    expect(await count(sql`SELECT count(*) AS n FROM orders WHERE reduce_only`)).toBeGreaterThan(0);
  });

  it('orders add up to their fill legs and their status follows', async () => {
    const { sql } = db;
    expect(await count(sql`
      SELECT count(*) AS n FROM orders o
      LEFT JOIN (SELECT order_id, sum(size) AS s, sum(size * price) AS v FROM fills GROUP BY order_id) f USING (order_id)
      WHERE o.filled_size <> coalesce(f.s, 0)
         OR (f.s > 0 AND abs(o.avg_price - f.v / f.s) > 0.000001)
         OR (o.status = 'filled' AND o.filled_size <> o.size)
         OR (o.status IN ('open', 'rejected') AND o.filled_size <> 0)
         OR (o.status = 'partially_filled' AND NOT (o.filled_size > 0 AND o.filled_size < o.size))`)).toBe(0);
  });

  it('sizes sit on each market grid and prices have at most 5 significant figures', async () => {
    const { sql } = db;
    expect(await count(sql`
      SELECT count(*) AS n FROM fills f JOIN markets m ON m.symbol = f.market
      WHERE f.size % power(10::numeric, -m.sz_decimals) <> 0 OR f.size <= 0`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM orders WHERE price IS NOT NULL AND length(rtrim(replace(trim(to_char(price, 'FM9999999990.9999999999')), '.', ''), '0')) > 5 AND price <> trunc(price)`)).toBe(0);
  });

  it('flips have a closing leg on the old epoch and an opening leg on a new one', async () => {
    const { sql } = db;
    const flips = await sql<{ seq: number; closing: string; opening: string; closedSeq: number | null; openedSeq: number }[]>`
      SELECT f1.seq::int AS seq, f1.position_id AS closing, f2.position_id AS opening, pc.closed_seq::int AS "closedSeq", po.opened_seq::int AS "openedSeq"
      FROM fills f1
      JOIN fills f2 ON f2.seq = f1.seq AND f2.leg = f1.leg + 1 AND f2.order_id = f1.order_id AND f2.party = f1.party
      JOIN positions pc ON pc.position_id = f1.position_id
      JOIN positions po ON po.position_id = f2.position_id
      WHERE f1.position_id <> f2.position_id`;
    expect(flips.length).toBeGreaterThan(0);
    for (const f of flips) {
      expect(f.closedSeq).toBe(f.seq);
      expect(f.openedSeq).toBe(f.seq);
    }
    // The event says the same: closing leg positionSize 0, opening leg realizedPnl 0.
    const legs = await sql<{ positionSize: string; realizedPnl: string }[]>`
      SELECT e.payload->'legs'->(f2.leg - 1)->>'positionSize' AS "positionSize", e.payload->'legs'->f2.leg->>'realizedPnl' AS "realizedPnl"
      FROM fills f1 JOIN fills f2 ON f2.seq = f1.seq AND f2.leg = f1.leg + 1 AND f2.order_id = f1.order_id AND f2.party = f1.party
      JOIN events e ON e.seq = f1.seq WHERE f1.position_id <> f2.position_id`;
    for (const l of legs) expect([l.positionSize, l.realizedPnl]).toEqual(['0.0000000000', '0.0000000000']);
    expect(await count(sql`SELECT count(*) AS n FROM positions WHERE status = 'closed' AND (size <> 0 OR closed_seq IS NULL)`)).toBe(0);
  });

  it('every mirror row has its event, and fill legs equal the event legs', async () => {
    const { sql } = db;
    expect(await count(sql`
      SELECT count(*) AS n FROM fills f JOIN events e ON e.seq = f.seq AND e.kind = 'engine.order_filled'
      WHERE e.payload->'legs'->f.leg->>'newBalance' = f.new_balance::text AND e.payload->'legs'->f.leg->>'positionId' = f.position_id
        AND e.payload->'legs'->f.leg->>'size' = f.size::text AND e.payload->>'matchId' = f.match_id`)).toBe(result.counts.fills);
    const orphan = (table: string, col: string, kinds: string[]) => count(sql`
      SELECT count(*) AS n FROM ${sql(table)} t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = t.${sql(col)} AND e.kind IN ${sql(kinds)})`);
    expect(await orphan('orders', 'created_seq', ['engine.order_placed', 'engine.order_rejected'])).toBe(0);
    expect(await orphan('deposits', 'seq', ['inbound.deposit'])).toBe(0);
    expect(await orphan('withdrawals', 'seq', ['inbound.withdrawal_request'])).toBe(0);
    expect(await orphan('triggers', 'created_seq', ['engine.trigger_set'])).toBe(0);
    expect(await orphan('positions', 'opened_seq', ['engine.order_filled'])).toBe(0);
    expect(await orphan('sessions', 'created_seq', ['session.authorized'])).toBe(0);
  });

  it('balances follow realized PnL and fees leg by leg between deposits and withdrawals', async () => {
    const { sql } = db;
    // Replaying every balance-changing event per party must reproduce each leg's newBalance.
    const rows = await sql<{ seq: number; kind: string; payload: any }[]>`
      SELECT seq::int AS seq, kind, payload FROM events WHERE kind IN ('inbound.deposit', 'engine.approve_submitted', 'engine.order_filled') ORDER BY seq`;
    const ONE = 10_000_000_000n;
    const dec = (s: string) => {
      const neg = s.startsWith('-');
      const [i, f] = (neg ? s.slice(1) : s).split('.');
      const v = BigInt(i!) * ONE + BigInt(f!);
      return neg ? -v : v;
    };
    const balance = new Map<string, bigint>();
    const party = new Map<string, string>(
      (await sql<{ withdrawalId: string; party: string }[]>`SELECT withdrawal_id AS "withdrawalId", party FROM withdrawals`).map((w) => [w.withdrawalId, w.party]),
    );
    const amounts = new Map((await sql<{ withdrawalId: string; amount: string }[]>`SELECT withdrawal_id AS "withdrawalId", amount FROM withdrawals`).map((w) => [w.withdrawalId, w.amount]));
    const realized = new Map<string, bigint>();
    let checked = 0;
    for (const e of rows) {
      if (e.kind === 'inbound.deposit') {
        const p = (await sql<{ party: string }[]>`SELECT party FROM events WHERE seq = ${e.seq}`)[0]!.party;
        balance.set(p, (balance.get(p) ?? 0n) + dec(e.payload.amount));
        expect(fmtOk(balance.get(p)!, e.payload.newBalance)).toBe(true);
      } else if (e.kind === 'engine.approve_submitted') {
        const p = party.get(e.payload.withdrawalId)!;
        balance.set(p, balance.get(p)! - dec(amounts.get(e.payload.withdrawalId)!));
      } else {
        for (const leg of e.payload.legs) {
          // realizedPnl is the epoch's running total: the leg's own PnL is its change.
          const before = realized.get(leg.positionId) ?? 0n;
          const now = dec(leg.realizedPnl);
          realized.set(leg.positionId, now);
          const next = (balance.get(leg.party) ?? 0n) + (now - before) - dec(leg.fee);
          balance.set(leg.party, next);
          expect(dec(leg.newBalance)).toBe(next);
          checked++;
        }
      }
    }
    expect(checked).toBe(result.counts.fills);
    function fmtOk(v: bigint, s: string) {
      return dec(s) === v;
    }
  });

  it('commitments: one deliberate mismatch, the last batch pending, vault totals from the collateral rows', async () => {
    const { sql } = db;
    const claims = await sql<{ party: string; userSeq: number; status: string }[]>`
      SELECT e.party, (e.payload->>'userSeq')::int AS "userSeq",
             CASE WHEN ub.party IS NULL THEN 'pending' WHEN ub.root = e.payload->>'root' THEN 'match' ELSE 'mismatch' END AS status
      FROM events e LEFT JOIN user_batches ub ON ub.party = e.party AND ub.user_seq = (e.payload->>'userSeq')::bigint
      WHERE e.kind = 'engine.user_batch_committed'`;
    const mismatches = claims.filter((c) => c.status === 'mismatch');
    expect(mismatches).toEqual([{ party: result.mismatch!.party, userSeq: result.mismatch!.userSeq, status: 'mismatch' }]);
    const lastBatchUsers = await count(sql`SELECT (payload->>'userBatchCount')::int AS n FROM events WHERE kind = 'outbound.batch_committed' ORDER BY seq DESC LIMIT 1`);
    expect(claims.filter((c) => c.status === 'pending')).toHaveLength(lastBatchUsers);
    expect(await count(sql`SELECT count(*) AS n FROM batches`)).toBe(result.batches - 1);
    const [vault] = await sql<{ ok: boolean }[]>`
      SELECT v.total_deposits = (SELECT sum(amount) FROM deposits)
         AND v.total_withdrawals = (SELECT coalesce(sum(amount), 0) FROM withdrawals WHERE status = 'approved')
         AND v.balance = v.total_deposits - v.total_withdrawals AS ok
      FROM vaults v`;
    expect(vault!.ok).toBe(true);
    expect(await count(sql`
      SELECT count(*) AS n FROM withdrawal_counters c
      WHERE c.nonce <> (SELECT max(nonce) FROM withdrawals w WHERE w.party = c.party)`)).toBe(0);
  });

  it('is deterministic: the same seed number gives the same rows', async () => {
    const other = await createTestDatabase();
    try {
      const again = await seed(other.sql, { seed: 42, parties: 20, fills: 4_000, batchEvery: 400, copy: other.kind === 'postgres' });
      expect(again.counts).toEqual(result.counts);
      const digest = (sql: TestDatabase['sql']) =>
        sql<{ d: string }[]>`SELECT md5(string_agg(seq || ':' || kind || ':' || payload::text, ',' ORDER BY seq)) AS d FROM events`;
      expect((await digest(other.sql))[0]!.d).toBe((await digest(db.sql))[0]!.d);
    } finally {
      await other.drop();
    }
  }, 120_000);
});
