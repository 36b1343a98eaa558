// Stream epochs: the identity of the engine history, the same on every replica that follows it
// (derived from seq 1, from the database or from the engine); a since= from another epoch is reset
// and served fresh; a replaced history is detected even when its head has passed the old resume
// point, and nothing of the old history survives in the state.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { A, simpleMatch, tick } from '../../unit/projections/fixtures.js';
import { connect, insertEvents, seqs, startStack, ticks, ts, type Stack } from './helpers.js';

describe('stream epoch', () => {
  const stacks: Stack[] = [];
  let db: TestDatabase | undefined;
  afterEach(async () => {
    for (const s of stacks.splice(0)) await s.close();
  });
  afterAll(async () => db?.drop());

  it('is derived from the history itself: two replicas, one reading seq 1 from the database and one from the engine, agree', async () => {
    db = await createTestDatabase();
    // Seq 1 is a fill: nested payload whose keys jsonb stores in another order than the engine sends them.
    const history = [simpleMatch(1, ts(1), '100', '1'), ...ticks(2, 5)];
    await insertEvents(db, history);
    const engine = await startScriptedEngine();
    engine.push(...history);
    const withDb = await startStack({ DATABASE_URL: db.url }, { engine });
    stacks.push(withDb);
    const engineOnly = await startStack({}, { engine });
    stacks.push(engineOnly);
    expect(withDb.live.epoch).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(engineOnly.live.epoch).toBe(withDb.live.epoch);
    // The database answered: the engine was not asked for seq 1 by that replica (its bridge resumed one early at 4).
    expect(engine.connections.filter((c) => c.lastEventId === '0')).toHaveLength(1);

    const c = await connect(withDb.gw.url, 'control=true');
    await c.waitFor((m) => m.length >= 1);
    expect(c.messages[0]).toMatchObject({ kind: 'stream.subscribed', seq: 5, payload: { epoch: withDb.live.epoch, headSeq: 5 } });
    expect(c.schemaErrors).toEqual([]);

    // Another history (another seq 1) has another epoch.
    const other = await startScriptedEngine();
    other.push(tick(1, ts(1000)), ...ticks(2, 5));
    const third = await startStack({}, { engine: other });
    stacks.push(third);
    expect(third.live.epoch).not.toBe(withDb.live.epoch);
  });

  it('since= with another epoch: stream.reset (epoch_mismatch), then served fresh (snapshots, live; no replay)', async () => {
    const s = await startStack();
    stacks.push(s);
    await s.engine.waitFor(() => s.engine.open === 1);
    s.engine.push(simpleMatch(1, ts(1), '100', '1'), ...ticks(2, 3));
    await waitFor(() => s.live.status().maxSeq === 3, 5_000, 'events');
    const epoch = s.live.epoch!;

    const same = await connect(s.gw.url, `kinds=engine.tick_start&since=1&epoch=${epoch}`);
    const other = await connect(s.gw.url, 'kinds=engine.tick_start,candle.update&intervals=1m&since=1&epoch=someOtherEpoch1');
    s.engine.push(tick(4, ts(4)));
    await same.waitFor((m) => m.some((x) => x.seq === 4));
    await other.waitFor((m) => m.some((x) => x.seq === 4));
    expect(seqs(same)).toEqual([2, 3, 4]);
    expect(same.messages.map((m) => m.kind)).toEqual(['stream.subscribed', ...Array(3).fill('engine.tick_start')]);

    expect(other.messages.map((m) => [m.kind, m.seq, m.snapshot ?? false])).toEqual([
      ['stream.subscribed', 3, false],
      ['stream.reset', 3, false],
      ['candle.update', 1, true], // the state as of the head, not a replay
      ['engine.tick_start', 4, false],
    ]);
    expect(other.messages[1]!.payload).toEqual({ epoch, previousEpoch: 'someOtherEpoch1', reason: 'epoch_mismatch' });
    expect([...same.schemaErrors, ...other.schemaErrors]).toEqual([]);
  });

  it('a replaced history whose head already passed the resume point is detected (resume one early, compare), clients reset, stale state dropped', async () => {
    const s = await startStack();
    stacks.push(s);
    await s.engine.waitFor(() => s.engine.open === 1);
    s.engine.push(simpleMatch(1, ts(1), '100', '2'), ...ticks(2, 4));
    await waitFor(() => s.live.status().maxSeq === 4, 5_000, 'old history');
    const oldEpoch = s.live.epoch;
    const ctl = await connect(s.gw.url, `party=${A}&control=true&kinds=engine.tick_start,position.update`);
    const plain = await connect(s.gw.url, 'kinds=engine.tick_start');
    await ctl.waitFor((m) => m.some((x) => x.kind === 'position.update'));
    expect(ctl.frames().map((f) => [f.kind, f.snapshot])).toEqual([['position.update', true]]);

    // The engine restarts with another history and, before the bridge is back, passes seq 4.
    s.engine.reset();
    s.engine.push(...Array.from({ length: 6 }, (_, i) => tick(i + 1, ts(500 + i))));
    expect(await plain.closed).toEqual({ code: 4011, reason: 'stream reset' });
    await ctl.waitFor((m) => m.some((x) => x.kind === 'stream.reset'));
    const reset = ctl.messages.find((x) => x.kind === 'stream.reset')!;
    expect(reset.payload).toMatchObject({ previousEpoch: oldEpoch, reason: 'history_replaced' });
    expect(reset.payload.epoch).toBe(s.live.epoch);
    expect(s.live.epoch).not.toBe(oldEpoch);
    expect(reset.seq).toBe(6); // resumed from the new head
    // The bridge compared seq 4 (asked from 3) and found another event.
    expect(s.engine.connections.some((c) => c.lastEventId === '3')).toBe(true);
    expect(s.live.status().gap).toContain('engine event 4 differs from the one delivered (engine history replaced)');

    // New history streams on; nothing of the old one survives: no position, no candle, no replay.
    s.engine.push(tick(7, ts(507)));
    await ctl.waitFor((m) => m.some((x) => x.seq === 7 && x.kind === 'engine.tick_start'));
    const fresh = await connect(s.gw.url, `party=${A}&control=true&since=0`);
    s.engine.push(tick(8, ts(508)));
    await fresh.waitFor((m) => m.some((x) => x.seq === 8));
    expect(fresh.messages.map((m) => [m.kind, m.seq])).toEqual([
      ['stream.subscribed', 7],
      ['stream.gap', 7], // the replay history starts after the new head (6)
      ['engine.tick_start', 7],
      ['engine.tick_start', 8],
    ]);
    expect(fresh.messages[0]!.payload.epoch).toBe(s.live.epoch);
    expect([...ctl.schemaErrors, ...fresh.schemaErrors]).toEqual([]);
  });

  it('after a replacement the mirror (still the old history) is not read for party snapshots; a restart on a stale mirror is detected too', async () => {
    db ??= await createTestDatabase();
    await db.sql`DELETE FROM events`;
    await db.sql`DELETE FROM positions`;
    const old = [simpleMatch(1, ts(1), '100', '2'), ...ticks(2, 4)];
    await insertEvents(db, old);
    await db.sql`INSERT INTO positions (position_id, party, market, size, entry_price, realized_pnl, status, opened_seq, updated_seq, opened_at, updated_at)
      VALUES ('pa1', ${A}, 'BTC-PERP', 2, 100, 0, 'open', 1, 1, ${ts(1)}, ${ts(1)})`;
    const engine = await startScriptedEngine();
    engine.push(...old);
    const s = await startStack({ DATABASE_URL: db.url }, { engine });
    stacks.push(s);
    await waitFor(() => s.live.status().connected, 15_000, 'connected');
    const before = await connect(s.gw.url, `party=${A}&kinds=position.update`);
    await before.waitFor((m) => m.length >= 1, 15_000);
    expect(before.messages.map((m) => [m.payload.positionId, m.snapshot])).toEqual([['pa1', true]]); // from the mirror
    before.ws.close();
    const oldEpoch = s.live.epoch;

    // The engine's history is replaced (and passes seq 4); the mirror still holds the old one.
    engine.reset();
    engine.push(...Array.from({ length: 5 }, (_, i) => tick(i + 1, ts(900 + i))));
    await waitFor(() => s.live.status().gap?.includes('engine history replaced') === true, 15_000, 'replacement detected');
    // The runtime has reset (the epoch changes in the same step) and the bridge resumed at the new head.
    await waitFor(() => s.live.epoch !== oldEpoch && s.live.status().maxSeq === 5, 15_000, 'reset and resumed at the new head');
    const after = await connect(s.gw.url, `party=${A}&kinds=position.update,engine.tick_start`);
    engine.push(tick(6, ts(906)));
    await after.waitFor((m) => m.some((x) => x.seq === 6), 15_000);
    expect(after.messages.map((m) => `${m.kind}:${m.seq}`)).toEqual(['engine.tick_start:6']);

    // A gateway started now, on the same stale mirror, finds the engine's seq 4 differs from the mirror's.
    const restarted = await startStack({ DATABASE_URL: db.url }, { engine });
    stacks.push(restarted);
    await waitFor(() => restarted.live.status().gap?.includes('engine event 4 differs') === true, 15_000, 'stale mirror detected');
    await waitFor(() => restarted.live.epoch === s.live.epoch, 15_000, 'the same epoch as the other replica'); // both name the new history
  }, 60_000);
});
