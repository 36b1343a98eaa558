// The reference indexer against the reference engine with the simulator trading: an indexer
// process is SIGKILLed mid-stream, a new one resumes from max(events.seq), and every mirror table
// must then equal (a) a fresh replay of the recorded `events` from scratch and (b) the engine's own
// live view of positions, open orders and armed triggers.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { startIndexer, toMarketRows, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import type { EngineEvent } from '../../../sandbox/indexer/rows.js';
import { connect, IndexerStore } from '../../../sandbox/indexer/store.js';
import { startSimulator, type RunningSimulator } from '../../../sandbox/simulator/simulator.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { dumpTables } from './tables.js';
import { eventually } from '../../support/eventually.js';


describe('reference indexer: kill mid-stream, resume, compare with a replay', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let replayDb: TestDatabase;
  let child: ChildProcess | undefined;
  let sim: RunningSimulator | undefined;
  let indexer: RunningIndexer | undefined;

  // Closed after the afterAll below (registered later, run first), last started first: the engine,
  // then the databases.
  const file = fileScope();
  beforeAll(async () => {
    replayDb = await createTestDatabase();
    file.onTestFinished(() => replayDb.drop());
    db = await createTestDatabase({ migrate: false }); // the indexer migrates it itself
    file.onTestFinished(() => db.drop());
    // Ticks and commits are driven here, so the history can be made to stop for the comparison.
    engine = await testEngine(file, { heartbeatMs: 1000 });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await sim?.stop();
    await indexer?.close();
  });

  it('resumes without loss or duplication and matches a replay and the engine', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/indexer/main.ts'], {
      cwd: process.cwd(),
      env: { ...process.env, DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const ticker = setInterval(() => engine.engine.tick(), 50);
    const committer = setInterval(() => engine.engine.commit(), 250);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 250, bots: 6, seed: 3 });

    const indexed = async (): Promise<number> => {
      const rows = await db.sql<{ n: number | null }[]>`SELECT max(seq)::int AS n FROM events`.catch(() => [{ n: null }]);
      return rows[0]?.n ?? 0;
    };
    await eventually(async () => (await indexed()) >= 400, { what: 'the first indexer to write 400 events', timeoutMs: 25_000, everyMs: 50 });
    child.kill('SIGKILL'); // no clean shutdown: whatever was in flight is lost or committed whole
    await new Promise((r) => child!.once('exit', r));
    // A COMMIT the killed indexer sent just before dying still lands: read what it left only once
    // PostgreSQL has ended its connection (its backend finished whatever it had received).
    await eventually(async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'reference-indexer'`)[0]!.n === 0, { what: "the killed indexer's connection to end", timeoutMs: 10_000, everyMs: 50 });
    const atKill = await indexed();
    expect(stderr).toBe('');
    const engineAtKill = engine.engine.log.maxSeq;
    await eventually(() => engine.engine.log.maxSeq >= engineAtKill + 50, 'the engine 50 events further while no indexer runs');

    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken });
    expect(indexer.lastSeq()).toBe(atKill);
    // Let the market run until it has shown everything the mirror must hold (bounded, not a fixed sleep).
    const eventful = (): boolean => {
      const kinds = new Map<string, number>();
      for (const e of engine.engine.log.eventsSince(0)) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
      return (kinds.get('engine.order_filled') ?? 0) > 100 && (kinds.get('engine.trigger_fired') ?? 0) > 0 &&
        (kinds.get('engine.approve_submitted') ?? 0) > 0 && (kinds.get('outbound.batch_committed') ?? 0) > 2;
    };
    await eventually(async () => eventful(), { what: 'a market with fills, fired triggers, approved withdrawals and batches', timeoutMs: 30_000, everyMs: 50 });
    const seqThen = engine.engine.log.maxSeq;
    await eventually(() => engine.engine.log.maxSeq >= seqThen + 50, 'some more events (50) for the resumed indexer');
    const stats = sim.stats();
    await sim.stop();
    sim = undefined;
    clearInterval(ticker);
    clearInterval(committer);
    engine.engine.tick();
    engine.engine.commit(); // claim the last user batches too
    const maxSeq = engine.engine.log.maxSeq;
    await indexer.waitFor(maxSeq, 20_000);

    // (0) the simulator made a real market: fills, flips, fired triggers.
    expect(stats.errors).toBe(0);
    const counts = (await db.sql<Array<{ fills: number; closed: number; fired: number; approved: number; batches: number }>>`
      SELECT (SELECT count(*)::int FROM fills) AS fills,
             (SELECT count(*)::int FROM positions WHERE status = 'closed') AS closed,
             (SELECT count(*)::int FROM triggers WHERE status = 'fired') AS fired,
             (SELECT count(*)::int FROM withdrawals WHERE status = 'approved') AS approved,
             (SELECT count(*)::int FROM batches) AS batches`)[0]!;
    expect(counts.fills).toBeGreaterThan(100);
    expect(counts.closed).toBeGreaterThan(5);
    expect(counts.fired).toBeGreaterThan(0);
    expect(counts.approved).toBeGreaterThan(0);
    expect(counts.batches).toBeGreaterThan(2);

    // (1) every seq exactly once.
    const [ev] = await db.sql<{ n: number; lo: number; hi: number }[]>`SELECT count(*)::int AS n, min(seq)::int AS lo, max(seq)::int AS hi FROM events`;
    expect(ev).toEqual({ n: maxSeq, lo: 1, hi: maxSeq });
    expect(await db.sql`SELECT 1 FROM user_batches WHERE batch_num IS NULL`).toHaveLength(0);

    // (2) a replay of the recorded events from scratch, in uneven batches, gives identical tables.
    const replaySql = connect(replayDb.url);
    try {
      const store = new IndexerStore(replaySql, { vaultOperator: 'operator-1', corruptUserBatch: 0, corruptBatch: 0 });
      await store.upsertMarkets(toMarketRows(engine.engine.markets.toWire()));
      const rows = await db.sql<Array<{ seq: string; kind: string; ts: Date; market: string | null; party: string | null; payload: Record<string, unknown> }>>`
        SELECT seq, kind, ts, market, party, payload FROM events ORDER BY seq`;
      // The envelope as the engine sent it: null market/party omitted.
      const events: EngineEvent[] = rows.map((r) => ({
        seq: Number(r.seq),
        kind: r.kind,
        ts: r.ts.toISOString(),
        ...(r.market !== null ? { market: r.market } : {}),
        ...(r.party !== null ? { party: r.party } : {}),
        payload: r.payload,
      }));
      for (let i = 0; i < events.length; i += 777) await store.apply(events.slice(i, i + 777));
      const [live, replay] = [await dumpTables(db.sql), await dumpTables(replaySql)];
      for (const table of Object.keys(live)) expect({ table, rows: replay[table] }).toEqual({ table, rows: live[table] });
    } finally {
      await replaySql.end();
    }

    // (3) the mirror agrees with the engine's live state for every bot.
    const traders = (await db.sql<{ party: string }[]>`SELECT DISTINCT party FROM fills`).map((r) => r.party);
    expect(traders.length).toBe(7); // the six bots and the simulator's market maker
    for (const party of traders) {
      const me = engine.engine.userMe(party) as {
        positions: Array<{ positionId: string; size: string; entryPrice: string; realizedPnl: string }>;
        openOrders: Array<{ orderId: string; filledSize: string; avgPrice: string | null; status: string }>;
        triggers: Array<{ triggerId: string }>;
      };
      const positions = await db.sql<Array<{ positionId: string; size: string; entryPrice: string; realizedPnl: string }>>`
        SELECT position_id AS "positionId", size::text AS size, entry_price::text AS "entryPrice", realized_pnl::text AS "realizedPnl"
        FROM positions WHERE party = ${party} AND status = 'open' ORDER BY position_id`;
      expect(positions).toEqual(me.positions.map((p) => ({ positionId: p.positionId, size: p.size, entryPrice: p.entryPrice, realizedPnl: p.realizedPnl })).sort((a, b) => a.positionId.localeCompare(b.positionId)));
      const open = await db.sql<Array<{ orderId: string; filledSize: string; avgPrice: string | null; status: string }>>`
        SELECT order_id AS "orderId", filled_size::text AS "filledSize", avg_price::text AS "avgPrice", status
        FROM orders WHERE party = ${party} AND status IN ('open', 'partially_filled') ORDER BY order_id`;
      expect(open).toEqual(me.openOrders.map((o) => ({ orderId: o.orderId, filledSize: o.filledSize, avgPrice: o.avgPrice, status: o.status })).sort((a, b) => a.orderId.localeCompare(b.orderId)));
      const armed = await db.sql<{ triggerId: string }[]>`SELECT trigger_id AS "triggerId" FROM triggers WHERE party = ${party} AND status = 'armed' ORDER BY trigger_id`;
      expect(armed.map((t) => t.triggerId)).toEqual(me.triggers.map((t) => t.triggerId).sort());
    }
  }, 90_000);
});
