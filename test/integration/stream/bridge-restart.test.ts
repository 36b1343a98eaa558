// An engine restarted with a new history while its /healthz does not answer yet (still starting):
// the check before the connection says nothing, and the bridge connects with the old resume point,
// past the new engine's head. The stream then stays silent but for heartbeats; the gateway must
// still notice the new history within seconds, whether the new head stays below the old resume
// point or soon passes it (seen in the soak: a minute of stale stream after an engine restart).
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/scripted-sse.js';
import { tick } from '../../unit/projections/fixtures.js';
import { connect, seqs, startStack, ticks, ts, type Stack } from './helpers.js';

describe('bridge: engine restarted while its head is unknown', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** Old history 1..7 delivered, then the engine restarts empty with /healthz failing until the stream is reconnected. */
  const restartUnseen = async () => {
    s = await startStack();
    const engine = s.engine;
    await engine.waitFor(() => engine.open === 1);
    const ctl = await connect(s.gw.url, 'kinds=engine.tick_start&control=true');
    engine.push(...ticks(1, 7));
    await ctl.waitFor(() => seqs(ctl).length === 7);
    const before = engine.connections.length;
    engine.healthFailStatus = 503; // starting: its head is unknown
    engine.reset();
    await waitFor(() => engine.open === 1 && engine.connections.length > before, 10_000, 'reconnect');
    // Connected past the new head (one early from the old resume point 7): nothing to send but heartbeats.
    expect(engine.connections.at(-1)!.lastEventId).toBe('6');
    engine.healthFailStatus = null; // started
    return { engine, ctl, answeredAt: Date.now() };
  };

  it('a new head that stays below the old resume point: detected within seconds, clients reset, the new history followed from its head', async () => {
    const { engine, ctl, answeredAt } = await restartUnseen();
    engine.push(tick(1, ts(101)), tick(2, ts(102)));
    await ctl.waitFor((m) => m.some((x) => x.kind === 'stream.reset'), 8_000);
    expect(Date.now() - answeredAt).toBeLessThan(8_000);
    expect(ctl.messages.find((x) => x.kind === 'stream.reset')).toMatchObject({ payload: { reason: 'history_replaced' } });
    // Resumed from the new head (2; what came before it is backfilled from /v1/events, as documented).
    expect(s!.live.status().gap).toBe('engine head 2 is below the resume point 7 (engine history replaced): resumed from the engine head');
    // 4 after 3 on the same path: anything repeated before it would have come first.
    engine.push(tick(3, ts(103)), tick(4, ts(104)));
    await ctl.waitFor(() => seqs(ctl).length >= 9, 5_000);
    expect(seqs(ctl)).toEqual([1, 2, 3, 4, 5, 6, 7, 3, 4]);
    expect(ctl.frames().at(-2)!.ts).toBe(ts(103));
    expect(s!.live.status()).toMatchObject({ connected: true, maxSeq: 4 });
  }, 30_000);

  it('a new head that soon passes the old resume point: detected by the resume-point comparison, the new history delivered from its head', async () => {
    const { engine, ctl } = await restartUnseen();
    const fresh = Array.from({ length: 10 }, (_, i) => tick(i + 1, ts(201 + i)));
    engine.push(...fresh);
    await ctl.waitFor((m) => m.some((x) => x.kind === 'stream.reset'), 8_000);
    expect(ctl.messages.find((x) => x.kind === 'stream.reset')).toMatchObject({ payload: { reason: 'history_replaced' } });
    expect(s!.live.status().gap).toMatch(/engine history replaced/);
    // Nothing of the new history is taken for the old one's continuation (8..10 with the old epoch).
    engine.push(tick(11, ts(211)), tick(12, ts(212)));
    await ctl.waitFor(() => seqs(ctl).includes(12), 5_000); // after 11 on the same path: nothing else came between
    expect(seqs(ctl)).toEqual([1, 2, 3, 4, 5, 6, 7, 11, 12]);
    expect(s!.live.status()).toMatchObject({ connected: true, maxSeq: 12 });
  }, 30_000);
});
