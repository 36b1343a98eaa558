// The same stream suite with two fan-out worker processes holding the clients (WS_WORKERS=2):
// hand-over of the upgraded socket, frames over IPC, replay from the worker's history, 4008,
// pings, 1001 on shutdown and the counters reported back to the gateway's /metrics.
import pino from 'pino';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { hubSuite } from './hub-suite.js';
import { describe, expect, it } from 'vitest';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import { WorkerFanout } from '../../../src/stream/worker-fanout.js';
import { tick } from '../../unit/projections/fixtures.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, startStack, wsUrl } from './helpers.js';
import { isAlive } from '../../support/processes.js';

hubSuite({ WS_WORKERS: '2' });

describe('a fan-out worker that dies', () => {
  it('is replaced: its clients are cut (and reconnect, replayed from the history the replacement is given), the others and new ones keep receiving', async () => {
    const s = await startStack({ WS_WORKERS: '2' });
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      const hub = s.live.hub as WorkerFanout;
      const a = await connect(s.gw.url, 'kinds=engine.tick_start');
      const b = await connect(s.gw.url, 'kinds=engine.tick_start'); // least-loaded: the other worker
      s.engine.push(tick(1, '2026-11-21T10:00:01.000Z'));
      await a.waitFor((m) => m.length === 1);
      await b.waitFor((m) => m.length === 1);
      const [first, second] = hub.pids as [number, number];
      process.kill(first, 'SIGKILL');
      const cut = await Promise.race([a.closed, b.closed]);
      expect(cut.code).toBe(1006); // no close frame: the process holding it died
      await waitFor(() => hub.pids.length === 2 && !hub.pids.includes(first), 10_000, 'a replacement worker');
      expect(hub.pids).toContain(second);
      // The new connection goes to the replacement (least loaded). The cut client's reconnection
      // with since= is replayed from the history the replacement was given, not told of a gap.
      const c = await connect(s.gw.url, 'kinds=engine.tick_start&since=0');
      s.engine.push(tick(2, '2026-11-21T10:00:02.000Z'));
      await c.waitFor((m) => m.some((x) => x.seq === 2));
      expect(c.messages.map((m) => m.kind)).toEqual(['stream.subscribed', 'engine.tick_start', 'engine.tick_start']);
      expect(c.frames().map((f) => f.seq)).toEqual([1, 2]);
      const survivor = a.ws.readyState === a.ws.OPEN ? a : b;
      await survivor.waitFor((m) => m.some((x) => x.seq === 2));
      expect(survivor.frames().map((f) => f.seq)).toEqual([1, 2]);
    } finally {
      await s.close();
    }
  }, 30_000);
});

describe('a fan-out worker that stops reading', () => {
  it('is killed and replaced once its unread frames stay past 4 × WS_CLIENT_BUFFER_BYTES; the replacement serves', async () => {
    const s = await startStack({ WS_WORKERS: '1', WS_CLIENT_BUFFER_BYTES: '262144' }); // bound: 1 MiB
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      const hub = s.live.hub as WorkerFanout;
      await hub.ready();
      const [stalled] = hub.pids as [number];
      const c = await connect(s.gw.url, 'kinds=engine.tick_start');
      process.kill(stalled, 'SIGSTOP'); // alive, but reads nothing
      const pad = 'x'.repeat(16_000);
      for (let i = 1; i <= 200; i += 10) {
        s.engine.push(...Array.from({ length: 10 }, (_, k) => ({ seq: i + k, kind: 'engine.tick_start', ts: '2026-11-21T10:00:00.000Z', payload: { tick: i + k, pad } })));
        await new Promise((r) => setTimeout(r, 5));
      }
      await waitFor(() => hub.pids.length === 1 && hub.pids[0] !== stalled, 15_000, 'a replacement worker');
      expect(isAlive(stalled)).toBe(false);
      expect((await c.closed).code).toBe(1006); // its process was killed: no close frame
      await hub.ready();
      const d = await connect(s.gw.url, 'kinds=engine.tick_start');
      s.engine.push(tick(201, '2026-11-21T10:00:01.000Z'));
      await d.waitFor((m) => m.some((x) => x.seq === 201));
    } finally {
      await s.close();
    }
  }, 40_000);
});

describe('a fan-out worker that dies holding sockets it has not taken yet', () => {
  it('closes them, so their clients retry instead of hanging', async () => {
    const s = await startStack({ WS_WORKERS: '1' });
    try {
      const hub = s.live.hub as WorkerFanout;
      await hub.ready();
      const [worker] = hub.pids as [number];
      process.kill(worker, 'SIGSTOP'); // takes nothing: the sockets stay in transit
      const outcomes = [1, 2, 3].map(
        () =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(wsUrl(s.gw.url, 'kinds=engine.tick_start'));
            ws.once('open', () => resolve('open'));
            ws.once('error', (e) => resolve(`error: ${e.message}`));
            ws.once('close', () => resolve('closed'));
          }),
      );
      await waitFor(() => hub.size === 3, 5_000, 'three hand-overs');
      process.kill(worker, 'SIGKILL');
      const results = await Promise.race([Promise.all(outcomes), new Promise<string[]>((r) => setTimeout(() => r(['still hanging']), 5_000))]);
      expect(results).toHaveLength(3);
      for (const r of results) expect(r).toMatch(/^error: |^closed$/);
      // The replacement serves the retries.
      await waitFor(() => hub.pids.length === 1 && hub.pids[0] !== worker, 10_000, 'a replacement worker');
      await hub.ready();
      const c = await connect(s.gw.url, 'kinds=engine.tick_start');
      s.engine.push(tick(1, '2026-11-21T10:00:01.000Z'));
      await c.waitFor((m) => m.some((x) => x.seq === 1));
    } finally {
      await s.close();
    }
  }, 30_000);
});

/** A WorkerFanout on its own (no gateway around it), with real worker processes. */
function standaloneFanout(extra: { silenceMs?: number } = {}): WorkerFanout {
  return new WorkerFanout({
    workers: 1,
    bufferBytes: 262_144, // backlog bound: 1 MiB
    pingMs: 30_000,
    historySize: 100,
    logLevel: 'silent',
    metrics: StreamMetrics.for(new Registry()),
    logger: pino({ level: 'silent' }),
    ...extra,
  });
}

describe('a fan-out worker whose event loop is stuck', () => {
  it('is replaced once it stops reporting, even with no frames flowing', async () => {
    const fanout = standaloneFanout({ silenceMs: 1_000 });
    try {
      await fanout.ready();
      const [stuck] = fanout.pids as [number];
      process.kill(stuck, 'SIGSTOP');
      await waitFor(() => fanout.pids.length === 1 && fanout.pids[0] !== stuck, 10_000, 'a replacement worker');
      expect(isAlive(stuck)).toBe(false);
    } finally {
      await fanout.closeAll();
      await fanout.stop();
    }
  }, 30_000);

  it('does not hold up shutdown: the gateway kills it after its wait and closes', async () => {
    const s = await startStack({ WS_WORKERS: '1' });
    const hub = s.live.hub as WorkerFanout;
    await hub.ready();
    const [stuck] = hub.pids as [number];
    await connect(s.gw.url, 'kinds=engine.tick_start'); // the HTTP server will ask the worker about it
    process.kill(stuck, 'SIGSTOP');
    const t0 = Date.now();
    await s.close();
    expect(Date.now() - t0).toBeLessThan(10_000);
    await waitFor(() => !isAlive(stuck), 5_000, 'the stuck worker to be gone');
  }, 30_000);
});

describe('a burst of frames written in one go', () => {
  it('does not get a healthy worker killed, though it passes the backlog bound until the gateway yields', async () => {
    const fanout = standaloneFanout();
    try {
      await fanout.ready();
      const [worker] = fanout.pids as [number];
      // 3 MB in one synchronous run (as a 1 000-event backfill from the database is published).
      const pad = 'x'.repeat(10_000);
      for (let seq = 1; seq <= 300; seq++) fanout.publish({ kind: 'engine.tick_start', seq, ts: '2026-11-21T10:00:00.000Z', payload: { pad } });
      await new Promise((r) => setTimeout(r, 3_000)); // past the grace period
      expect(fanout.pids).toEqual([worker]);
      expect(isAlive(worker)).toBe(true);
    } finally {
      await fanout.closeAll();
      await fanout.stop();
    }
  }, 30_000);
});

describe('fan-out worker lifecycle', () => {
  it('ignores SIGTERM sent to the process group and is ended by the gateway when it closes', async () => {
    const s = await startStack({ WS_WORKERS: '2' });
    const hub = s.live.hub as WorkerFanout;
    await hub.ready(); // its signal handlers are in place
    const pids = hub.pids;
    expect(pids).toHaveLength(2);
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    process.kill(pids[0]!, 'SIGTERM'); // as a Ctrl-C or a service manager would
    process.kill(pids[1]!, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(pids.every(isAlive)).toBe(true);
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    await s.close();
    expect((await c.closed).code).toBe(1001);
    // This test process (the workers' parent's parent) is still alive, so only stop() can have ended them.
    await waitFor(() => !pids.some(isAlive), 5_000, 'workers ended by stop()');
  }, 30_000);
});
