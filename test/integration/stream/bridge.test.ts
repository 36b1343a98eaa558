// The SSE bridge against the scripted engine: resume, de-duplication, 410 filled from a real
// database, silence watchdog, no token.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { eventually } from '../../support/eventually.js';
import { VirtualClock } from '../../support/virtual-clock.js';
import { tick } from '../../unit/projections/fixtures.js';
import { connect, insertEvents, seqs, startStack, ticks, ts, type Stack } from './helpers.js';


describe('SSE bridge', () => {
  let s: Stack | undefined;
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  afterAll(async () => db?.drop());

  it('resumes with Last-Event-ID after a drop: nothing lost, nothing repeated, duplicates and stale seqs dropped', async () => {
    s = await startStack();
    await s.engine.waitFor(() => s!.engine.open === 1);
    expect(s.engine.connections[0]).toEqual({ lastEventId: undefined, authorization: `Bearer ${s.engine.token}`, status: 200 });
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    s.engine.push(...ticks(1, 3));
    await c.waitFor(() => seqs(c).length === 3);
    // Engine misbehaviour on the open stream: a repeat and an old seq.
    s.engine.writeRaw(tick(2, ts(2)));
    s.engine.writeRaw(tick(1, ts(1)));
    s.engine.silent = true;
    s.engine.push(...ticks(4, 6)); // logged by the engine, not yet sent
    s.engine.dropAll();
    s.engine.silent = false;
    await waitFor(() => s!.engine.connections.length === 2 && s!.engine.open === 1, 5_000, 'reconnect');
    // One event early: the engine sends 3 again, compared with the 3 already delivered (same history).
    expect(s.engine.connections[1]!.lastEventId).toBe('2');
    s.engine.push(...ticks(7, 7));
    // Frames arrive in seq order: a repeat of an earlier seq would be in before 7.
    await c.waitFor(() => seqs(c).includes(7));
    expect(seqs(c)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(s.live.status()).toEqual({ enabled: true, connected: true, maxSeq: 7, caughtUp: true });
    const metrics = await (await fetch(`${s.gw.url}/metrics`)).text();
    expect(metrics).toContain('bff_engine_max_seq 7');
    expect(metrics).toMatch(/bff_sse_reconnects_total [1-9]/);
    expect(metrics).toContain('bff_ws_frames_sent_total{kind="engine.tick_start"} 7');
  });

  it('a seq gap on the stream is asked again from the engine, which replays it', async () => {
    s = await startStack();
    await s.engine.waitFor(() => s!.engine.open === 1);
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    s.engine.push(...ticks(1, 2));
    await c.waitFor(() => seqs(c).length === 2);
    s.engine.silent = true;
    s.engine.push(...ticks(3, 4));
    s.engine.silent = false;
    s.engine.writeRaw(tick(5, ts(5))); // 3 and 4 skipped on this connection
    await c.waitFor(() => seqs(c).length >= 4);
    s.engine.push(...ticks(5, 5));
    await c.waitFor(() => seqs(c).includes(5));
    expect(seqs(c)).toEqual([1, 2, 3, 4, 5]);
    expect(s.engine.connections.at(-1)!.lastEventId).toBe('1'); // resume point 2, one early
  });

  it('410 (since before retention): the missing events come from the database events table, then the engine resumes', async () => {
    db = await createTestDatabase();
    s = await startStack({ DATABASE_URL: db.url });
    await s.engine.waitFor(() => s!.engine.open === 1);
    expect(s.engine.connections[0]!.lastEventId).toBeUndefined(); // empty mirror: live only
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    s.engine.push(...ticks(1, 2));
    await c.waitFor(() => seqs(c).length === 2);
    s.engine.silent = true;
    s.engine.push(...ticks(3, 9));
    await insertEvents(db, ticks(1, 7));
    s.engine.oldestSeq = 8;
    s.engine.dropAll();
    s.engine.silent = false;
    await c.waitFor(() => seqs(c).includes(9));
    expect(seqs(c)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(s.engine.connections.map((x) => [x.lastEventId, x.status]).slice(1)).toEqual([
      ['1', 410], // resume point 2, one early
      ['7', 200], // resume point 7 (from the database); the engine no longer has 7 to compare (oldest 8)
    ]);
    expect(s.live.status().gap).toBeUndefined();
  });

  it('410 with the database short of the gap: reported in /readyz, stream continues after it', async () => {
    db ??= await createTestDatabase();
    await db.sql`DELETE FROM events`;
    s = await startStack({ DATABASE_URL: db.url });
    await s.engine.waitFor(() => s!.engine.open === 1);
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    s.engine.push(...ticks(1, 1));
    await c.waitFor(() => seqs(c).length === 1);
    s.engine.silent = true;
    s.engine.push(...ticks(2, 6));
    await insertEvents(db, ticks(1, 3));
    s.engine.oldestSeq = 5;
    s.engine.dropAll();
    s.engine.silent = false;
    await c.waitFor(() => seqs(c).includes(6)); // in seq order: a 4 would have come before it
    expect(seqs(c)).toEqual([1, 2, 3, 5, 6]);
    expect(s.live.status().gap).toBe('events 4..4 unavailable (engine retention and database)');
    const ready = (await (await fetch(`${s.gw.url}/readyz`)).json()) as any;
    expect(ready.stream.gap).toBe('events 4..4 unavailable (engine retention and database)');
    expect(ready.reasons).toContain('SSE bridge gap: events 4..4 unavailable (engine retention and database)');
    // A client asking to replay across the gap is told to backfill.
    const late = await connect(s.gw.url, 'kinds=engine.tick_start&since=2');
    await late.waitFor((m) => m.length >= 2);
    expect(late.messages[1]).toMatchObject({ kind: 'stream.gap', payload: { requestedSince: 2, oldestAvailableSeq: 5, backfill: '/v1/events?since=2' } });
  });

  it('starts after the newest seq of the database so the engine replays what the mirror lacks', async () => {
    db ??= await createTestDatabase();
    await db.sql`DELETE FROM events`;
    await insertEvents(db, ticks(1, 4));
    const engine = await startScriptedEngine();
    engine.push(...ticks(1, 6));
    s = await startStack({ DATABASE_URL: db.url }, { engine });
    await engine.waitFor(() => engine.open === 1);
    // One early: the engine's 4 is compared with the database's 4 (the same history).
    expect(engine.connections[0]!.lastEventId).toBe('3');
    await waitFor(() => s!.live.status().maxSeq === 6, 5_000, 'replay');
    expect(s.live.status().gap).toBeUndefined();
  });

  it('a silent stream (no bytes, no heartbeat) is aborted after SSE_IDLE_MS and resumed', async () => {
    s = await startStack({ SSE_IDLE_MS: '300' });
    await s.engine.waitFor(() => s!.engine.open === 1);
    s.engine.push(...ticks(1, 1));
    await waitFor(() => s!.live.status().maxSeq === 1, 5_000, 'first event');
    s.engine.silent = true;
    await waitFor(() => s!.engine.connections.length >= 2, 5_000, 'watchdog reconnect');
    expect(s.engine.connections[1]!.lastEventId).toBe('0'); // resume point 1, one early
  });

  it('heartbeats keep a quiet stream open; without them the watchdog aborts it (virtual time)', async () => {
    const clock = new VirtualClock();
    const engine = await startScriptedEngine({ heartbeatMs: 20 });
    s = await startStack({ SSE_IDLE_MS: '300' }, { engine, clock });
    await engine.waitFor(() => engine.open === 1);
    // 2 s of the gateway's time, 100 ms at a time, a heartbeat received in each step (two written
    // since the step began: the first one has been read by then). The watchdog fires after 300 ms
    // without a byte, so it would have fired by the third step had a heartbeat not reset it.
    for (let step = 0; step < 20; step++) {
      const before = engine.heartbeats;
      await waitFor(() => engine.heartbeats >= before + 2, 5_000, 'heartbeats');
      await clock.advance(100);
    }
    expect(engine.connections).toHaveLength(1);
    // The same stream silent: 300 ms later it is aborted and resumed (after its backoff, on the same clock).
    engine.silent = true;
    await clock.advance(400);
    await eventually(
      async () => {
        if (engine.connections.length >= 2) return true;
        await clock.advance(50);
        return false;
      },
      { timeoutMs: 5_000, what: 'the watchdog to reconnect' },
    );
  });

  it('without ENGINE_ADMIN_TOKEN: no SSE connection, no book polls, clients connect and receive nothing', async () => {
    const clock = new VirtualClock();
    s = await startStack({ ENGINE_ADMIN_TOKEN: undefined, WS_ORDERBOOK_POLL_MS: '50' }, { clock });
    s.engine.books.set('BTC-PERP', { seq: 3, bids: [['1', '1']], asks: [] });
    const c = await connect(s.gw.url, 'kinds=trade&since=0');
    s.engine.push(...ticks(1, 3));
    // Eight poll periods of the gateway's time; a bridge would have connected at start, before
    // the client's upgrade and this round trip to the gateway.
    await clock.advance(400);
    await fetch(`${s.gw.url}/readyz`);
    expect(s.engine.connections).toEqual([]);
    expect(s.engine.bookRequests).toEqual([]);
    expect(c.messages).toEqual([]);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    expect(s.live.status()).toEqual({ enabled: false, connected: false, maxSeq: null, caughtUp: false });
  });

  it('a wrong token is refused by the engine and retried with backoff, not hammered (virtual time)', async () => {
    const clock = new VirtualClock();
    // The jitter fixed near its top: each retry comes just before its cap, so a refusal that comes
    // back while an advance is still running sets a backoff that ends after that advance (with a
    // draw near 0 it could end within it, and two attempts pass in one window).
    s = await startStack({ ENGINE_ADMIN_TOKEN: 'wrong' }, { clock, random: () => 0.999 });
    const engine = s.engine;
    const metrics = async () => (await (await fetch(`${s!.gw.url}/metrics`)).text()).match(/bff_sse_reconnects_total (\d+)/)?.[1];
    // The bridge has taken its refusal and waits on its backoff (counted as it starts to wait).
    const asleep = (n: number) => waitFor(() => engine.connections.length === n, 5_000, `attempt ${n}`).then(() => eventually(async () => (await metrics()) === String(n), { timeoutMs: 5_000, what: `refusal ${n} counted` }));
    await asleep(1); // the first attempt, at once
    // Full-jitter backoff from 250 ms, doubling: the k-th retry comes within 250 · 2^(k-1) ms of the
    // gateway's time, and only then, so each advance lets exactly one more attempt through.
    for (const [k, cap] of [[2, 250], [3, 500], [4, 1_000]] as const) {
      expect(engine.connections).toHaveLength(k - 1);
      await clock.advance(cap);
      await asleep(k);
    }
    expect(engine.connections).toHaveLength(4);
    expect(engine.connections.every((x) => x.status === 401)).toBe(true);
    expect(s.live.status()).toMatchObject({ enabled: true, connected: false });
  });
});
