// A restart does not reset the bar in progress: open buckets are rebuilt from the real database's
// `fills` (taker legs summed per match), and the stream resumes after the newest `events` seq.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { loadCandleSeed } from '../../../src/db/queries/candles.js';
import { Database } from '../../../src/db/database.js';
import { startScriptedEngine } from '../../support/scripted-sse.js';
import { A, B, simpleMatch, tick } from '../../unit/projections/fixtures.js';
import { connect, startStack } from './helpers.js';

async function insertFill(db: TestDatabase, seq: number, leg: number, role: 'taker' | 'maker', size: string, price: string, ts: string): Promise<void> {
  await db.sql`
    INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl, new_balance, position_id, created_at)
    VALUES (${seq}, ${leg}, ${`${seq}-${leg}`}, ${`m${seq}`}, ${`o${seq}${leg}`}, ${role === 'taker' ? A : B}, 'BTC-PERP', 'buy', ${role},
            ${size}, ${price}, 0, 0, 1000, ${`p${seq}${leg}`}, ${ts})`;
}

describe('candles rebuilt from the database at start', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    // A match of the week before (outside the current week: not read), then three matches of the current day;
    // seq 12 is a flip: two taker legs (1 + 2) of one match of size 3.
    await insertFill(db, 10, 0, 'taker', '5', '90', '2026-11-15T23:59:00.000Z');
    await insertFill(db, 11, 0, 'taker', '1', '100', '2026-11-21T10:00:05.000Z');
    await insertFill(db, 11, 1, 'maker', '1', '100', '2026-11-21T10:00:05.000Z');
    await insertFill(db, 12, 0, 'taker', '1', '104', '2026-11-21T10:00:30.000Z');
    await insertFill(db, 12, 1, 'taker', '2', '104', '2026-11-21T10:00:30.000Z');
    await insertFill(db, 12, 2, 'maker', '3', '104', '2026-11-21T10:00:30.000Z');
    await db.sql`INSERT INTO events (seq, kind, ts, payload) VALUES (13, 'engine.tick_start', '2026-11-21T10:00:40.000Z', '{"tick":13}'::jsonb)`;
  });
  afterAll(async () => db.drop());

  it('reads only the current week (from Monday 00:00 UTC), one trade per match with taker legs summed', async () => {
    // Through the gateway's own Database (camelCase columns, int8 → number), as the runtime reads it.
    const gwDb = new Database({ databaseUrl: db.url, dbPoolMax: 1, dbConnectTimeoutS: 3, dbStatementTimeoutMs: 5000 }, { warn() {}, error() {} });
    const seed = await loadCandleSeed(gwDb).finally(() => gwDb.close());
    expect(seed.maxSeq).toBe(13);
    expect(seed.nowMs).toBe(Date.parse('2026-11-21T10:00:40.000Z'));
    expect(seed.trades.map((t) => [t.tsMs, t.price, t.size])).toEqual([
      [Date.parse('2026-11-21T10:00:05.000Z'), 100n * 10n ** 10n, 1n * 10n ** 10n],
      [Date.parse('2026-11-21T10:00:30.000Z'), 104n * 10n ** 10n, 3n * 10n ** 10n],
    ]);
    expect(seed.truncated).toBe(false);
  });

  it('the next live match continues the bar and the stream resumes after the newest seq', async () => {
    // The engine's history reaches the mirror's newest seq (its /healthz maxSeq is 13), as a real
    // engine's does; a head below it would be read as an engine restarted with a new history.
    const engine = await startScriptedEngine();
    engine.push(tick(13, '2026-11-21T10:00:40.000Z'));
    const s = await startStack({ DATABASE_URL: db.url }, { engine });
    try {
      await s.engine.waitFor(() => s.engine.open === 1 && s.engine.connections.length === 2);
      // (The database has no seq 1: the first request read the engine's first event for the epoch.)
      expect(s.engine.connections.at(-1)!.lastEventId).toBe('12'); // resume point 13, one early
      const c = await connect(s.gw.url, 'kinds=candle.update&intervals=1m,1d');
      // State on subscribe: the rebuilt bars, as of their latest match (seq 12).
      await c.waitFor((m) => m.length === 2);
      expect(c.frames().map((f) => [f.interval, f.seq, f.snapshot, f.payload.trades, f.payload.close])).toEqual([
        ['1m', 12, true, 2, '104.0000000000'],
        ['1d', 12, true, 2, '104.0000000000'],
      ]);
      s.engine.push(simpleMatch(14, '2026-11-21T10:00:50.000Z', '98', '0.5'));
      await c.waitFor((m) => m.filter((x) => x.kind === 'candle.update').length === 4);
      const [oneMinute, oneDay] = c.frames().slice(2);
      expect(oneMinute!.snapshot).toBeUndefined();
      expect(oneMinute!.payload).toEqual({
        openTs: '2026-11-21T10:00:00.000Z',
        closeTs: '2026-11-21T10:01:00.000Z',
        open: '100.0000000000',
        high: '104.0000000000',
        low: '98.0000000000',
        close: '98.0000000000',
        volume: '4.5000000000',
        trades: 3,
      });
      expect(oneDay!.payload).toMatchObject({ openTs: '2026-11-21T00:00:00.000Z', open: '100.0000000000', trades: 3 });
    } finally {
      await s.close();
    }
  });
});
