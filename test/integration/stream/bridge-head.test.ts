// The bridge's resume point against the engine's head, and what /readyz and /metrics say about it:
// the max-seq gauge from the start, an engine whose history was replaced (head below the resume
// point), and "SSE bridge down" through the HTTP route.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { connect, deliveredTo, insertEvents, seqs, startStack, ticks, ts, type Stack } from './helpers.js';
import { tick } from '../../unit/projections/fixtures.js';

const gauge = async (url: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^bff_engine_max_seq (\d+)$/m.exec(text)?.[1]);
};

describe('bridge resume point vs engine head', () => {
  let s: Stack | undefined;
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  afterAll(async () => db?.drop());

  it('bff_engine_max_seq is the start point (database) before any event arrives, as /readyz says', async () => {
    db ??= await createTestDatabase();
    await db.sql`DELETE FROM events`;
    await insertEvents(db, ticks(1, 4));
    const engine = await startScriptedEngine();
    engine.push(...ticks(1, 4)); // nothing to replay
    s = await startStack({ DATABASE_URL: db.url }, { engine });
    await engine.waitFor(() => engine.open === 1);
    expect(engine.connections[0]!.lastEventId).toBe('3'); // resume point 4, one early
    const ready = (await (await fetch(`${s.gw.url}/readyz`)).json()) as any;
    expect(ready.engineMaxSeq).toBe(4);
    expect(await gauge(s.gw.url)).toBe(4);
  });

  it('live only (no database): the gauge is the engine head at connect', async () => {
    const engine = await startScriptedEngine();
    engine.push(...ticks(1, 5));
    s = await startStack({}, { engine });
    await engine.waitFor(() => engine.open === 1 && engine.connections.length === 2);
    // The first request read seq 1 for the epoch (no database); the bridge's own starts at the head.
    expect(engine.connections.map((c) => c.lastEventId)).toEqual(['0', undefined]);
    const ready = (await (await fetch(`${s.gw.url}/readyz`)).json()) as any;
    expect(ready.engineMaxSeq).toBe(5);
    expect(await gauge(s.gw.url)).toBe(5);
  });

  it('an engine restarted with a new history (head below the resume point): resumes from the new head, resets clients and reports it', async () => {
    s = await startStack();
    await s.engine.waitFor(() => s!.engine.open === 1);
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    const ctl = await connect(s.gw.url, 'kinds=engine.tick_start&control=true');
    s.engine.push(...ticks(1, 7));
    await c.waitFor(() => seqs(c).length === 7);
    await ctl.waitFor(() => seqs(ctl).length === 7);
    expect(s.live.status().gap).toBeUndefined();
    const oldEpoch = s.live.epoch;

    s.engine.reset(); // new, empty history; streams dropped
    await waitFor(() => s!.engine.open === 1 && s!.engine.connections.length >= 2, 5_000, 'reconnect');
    expect(s.engine.connections.at(-1)!.lastEventId).toBe('0'); // the new head, not 7
    // A connection without control messages is closed so it bootstraps again; one with them is told.
    expect(await c.closed).toEqual({ code: 4011, reason: 'stream reset' });
    await ctl.waitFor((m) => m.some((x) => x.kind === 'stream.reset'));
    expect(ctl.messages.find((x) => x.kind === 'stream.reset')).toMatchObject({
      seq: 0,
      payload: { epoch: 'empty', previousEpoch: oldEpoch, reason: 'history_replaced' },
    });
    const newHistory = [tick(1, ts(101)), tick(2, ts(102))];
    s.engine.push(...newHistory);
    await ctl.waitFor(() => seqs(ctl).length >= 9);
    await deliveredTo(s, 2, ctl);
    expect(seqs(ctl)).toEqual([1, 2, 3, 4, 5, 6, 7, 1, 2]);
    expect(ctl.messages.map((m) => m.kind).slice(8, 10)).toEqual(['engine.tick_start', 'stream.reset']);
    // The new history's first event names its epoch (another than the old one), and the client is told
    // (as it was when the old history, empty at start, got its first event).
    await ctl.waitFor((m) => m.filter((x) => x.kind === 'stream.subscribed').length === 3);
    expect(ctl.messages.filter((x) => x.kind === 'stream.subscribed').map((x) => x.payload.epoch)).toEqual(['empty', oldEpoch, s.live.epoch]);
    expect(s.live.epoch).not.toBe(oldEpoch);
    expect(ctl.messages.filter((x) => x.kind === 'stream.subscribed').at(-1)!.payload.epoch).toBe(s.live.epoch);
    expect(ctl.schemaErrors).toEqual([]);

    const text = 'engine head 0 is below the resume point 7 (engine history replaced): resumed from the engine head';
    expect(s.live.status()).toMatchObject({ connected: true, maxSeq: 2, gap: text });
    const res = await fetch(`${s.gw.url}/readyz`);
    const ready = (await res.json()) as any;
    expect(res.status).toBe(503);
    expect(ready.stream.gap).toBe(text);
    expect(ready.reasons).toContain(`SSE bridge gap: ${text}`);
    expect(await gauge(s.gw.url)).toBe(2);

    // The replay history holds the new history only.
    const late = await connect(s.gw.url, 'kinds=engine.tick_start&since=0');
    await late.waitFor((m) => m.length >= 3);
    // A live event after the replay, on the same connection: anything else replayed would come before it.
    s.engine.push(tick(3, ts(103)));
    await late.waitFor((m) => m.length >= 4);
    expect(late.messages.map((m) => m.kind)).toEqual(['stream.subscribed', 'engine.tick_start', 'engine.tick_start', 'engine.tick_start']);
    expect(late.frames().map((f) => f.ts)).toEqual([ts(101), ts(102), ts(103)]);
  });

  it('/readyz answers 503 "SSE bridge down" while the bridge is disconnected, and recovers', async () => {
    db ??= await createTestDatabase();
    await db.sql`DELETE FROM events`;
    s = await startStack({ DATABASE_URL: db.url });
    await s.engine.waitFor(() => s!.engine.open === 1);
    await waitFor(() => s!.live.status().connected, 5_000, 'connected');
    const up = await fetch(`${s.gw.url}/readyz`);
    const upBody = (await up.json()) as any;
    expect(upBody.reasons).not.toContain('SSE bridge down');
    expect(upBody.stream).toMatchObject({ enabled: true, connected: true });

    s.engine.streamFailStatus = 503; // the engine answers, its admin stream does not
    s.engine.dropAll();
    await waitFor(() => !s!.live.status().connected, 5_000, 'disconnected');
    const down = await fetch(`${s.gw.url}/readyz`);
    const downBody = (await down.json()) as any;
    expect(down.status).toBe(503);
    expect(downBody.status).toBe('degraded');
    expect(downBody.reasons).toContain('SSE bridge down');
    expect(downBody.engine.reachable).toBe(true);
    expect(downBody.stream).toMatchObject({ enabled: true, connected: false });

    s.engine.streamFailStatus = null;
    await waitFor(() => s!.live.status().connected, 15_000, 'reconnected');
    expect(((await (await fetch(`${s.gw.url}/readyz`)).json()) as any).reasons).not.toContain('SSE bridge down');
  }, 30_000);

  it('/readyz says "SSE bridge down" when the bridge never connects (engine refuses the token)', async () => {
    s = await startStack({ ENGINE_ADMIN_TOKEN: 'wrong' });
    await waitFor(() => s!.engine.connections.length >= 1, 5_000, 'first attempt');
    const res = await fetch(`${s.gw.url}/readyz`);
    const body = (await res.json()) as any;
    expect(res.status).toBe(503);
    expect(body.reasons).toContain('SSE bridge down');
    expect(body.stream).toEqual({ enabled: true, connected: false });
  });
});
