// Kept list rows know which database they came from (issue 29, ADR 0116). A gateway is warmed on
// database A (a PostgreSQL server of this test's own); A is then replaced in place by a base backup
// taken before A's last three updates, on which three other updates reuse the very same transaction
// ids with other content: the same (table, key, xmin) now means other bytes. Every list body the
// warm gateway answers (over HTTP) must equal a direct read: a gateway that keeps nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { migrate } from '../../../schema/migrate.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { postgresBin, startOwnPostgres, type OwnPostgres } from '../../support/own-postgres.js';

const bin = postgresBin();
if (!bin) console.warn('\n*** SKIPPED: kept rows across a restore need PostgreSQL binaries under /usr/lib/postgresql ***\n');

describe.skipIf(!bin)('kept list rows across a base backup restored in place', () => {
  let pg: OwnPostgres;
  let kept: TestGateway;
  let plain: TestGateway;
  let seeded: SeedResult;
  const connect = () => postgres(pg.url, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    pg = await startOwnPostgres();
    const sql = connect();
    await migrate(sql);
    seeded = await seed(sql, { seed: 7, parties: 4, fills: 200, batchEvery: 50 });
    await sql.end();
    kept = await startGateway({ DATABASE_URL: pg.url, AUTH_DISABLED: 'true' }, { listen: true });
    plain = await startGateway({ DATABASE_URL: pg.url, AUTH_DISABLED: 'true', LIST_ROW_CACHE_BYTES: '0' }, { listen: true });
  }, 180_000);
  afterAll(async () => {
    await kept?.close();
    await plain?.close();
    await pg?.close();
  });

  function urls(): string[] {
    const party = seeded.parties[1]!;
    return ['/v1/fills?limit=1000', `/v1/users/${party}/fills?limit=1000`, '/v1/events?limit=1000', '/v1/deposits?limit=1000'];
  }
  const body = async (gw: TestGateway, url: string) => {
    const res = await fetch(`${gw.url}${url}`);
    expect(res.status, url).toBe(200);
    return res.text();
  };
  async function expectSameBodies(label: string): Promise<void> {
    for (const url of urls()) expect(await body(kept, url), `${label}: ${url}`).toBe(await body(plain, url));
  }

  /** Three transactions, each updating six fill rows: the xmins they wrote, by row. */
  async function update(sql: postgres.Sql, seqs: number[][], bump: string): Promise<Map<string, string>> {
    const xmins = new Map<string, string>();
    for (const group of seqs) {
      await sql.begin(async (tx) => {
        const rows = await tx<Array<{ seq: string; leg: string; xmin: string }>>`
          UPDATE fills SET price = price + ${bump}::numeric, size = size + ${bump}::numeric / 1000, fee = fee + ${bump}::numeric
          WHERE seq = ANY(${group}) RETURNING seq::text, leg::text, xmin::text`;
        for (const r of rows) xmins.set(`${r.seq}:${r.leg}`, r.xmin);
      });
    }
    return xmins;
  }

  it('serves no row of the database it replaced: every body equals a direct read', { timeout: 180_000 }, async () => {
    const sql = connect();
    const top = await sql<Array<{ seq: number }>>`SELECT DISTINCT seq FROM fills ORDER BY seq DESC LIMIT 9`;
    const seqs = top.map((r) => Number(r.seq));
    const groups = [seqs.slice(0, 3), seqs.slice(3, 6), seqs.slice(6, 9)];
    await sql.end();

    const backup = pg.dir('backup');
    await pg.tool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(pg.port), '-U', 'postgres', '-D', backup, '-X', 'stream', '-c', 'fast']);

    // A: three updates after the backup; the gateway keeps what they wrote.
    const onA = connect();
    const written = await update(onA, groups, '1');
    await onA.end();
    expect(written.size).toBeGreaterThanOrEqual(18);
    await expectSameBodies('A');
    await expectSameBodies('A warm'); // kept now
    const warm = kept.app.db.rows.stats();
    expect(warm.rows).toBeGreaterThan(0);

    // B: the backup, restored in place (same address), and three other updates under the same xids.
    await pg.stop();
    await pg.replaceData(backup);
    await pg.start();
    const onB = connect();
    const first = Math.min(...[...written.values()].map(Number));
    // The next xid B hands out (without taking one), brought up to A's first.
    const next = async () => Number(((await onB<Array<{ x: string }>>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x`)[0] as { x: string }).x);
    while ((await next()) < first) await onB`SELECT txid_current()`;
    expect(await next(), 'B must hand out the xids A used').toBe(first);
    const rewritten = await update(onB, groups, '2');
    await onB.end();
    expect(rewritten).toEqual(written); // the same rows, the same xmins: the same versions, other content

    await expectSameBodies('B');
    expect(kept.app.db.rows.stats().databaseChanges).toBe(1);
    const metrics = await (await fetch(`${kept.url}/metrics`)).text();
    expect(metrics).toMatch(/^bff_list_row_cache_database_changes_total 1$/m);
  });
});
