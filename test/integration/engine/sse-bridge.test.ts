// The SSE bridge against a scripted engine over loopback (test/support/scripted-sse.ts): what it
// hands its sink is what the EngineEventSink contract promises (src/contracts/engine-event-source.ts).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SseBridge } from '../../../src/engine/sse-bridge.js';
import { startScriptedEngine, waitFor, type ScriptedEngine } from '../../support/scripted-sse.js';
import { event, memoryStore, noMetrics, quietLogger, recordingSink, type RecordingSink } from '../../support/delivery-support.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: { store?: EngineEvent[] } = {}): Promise<{ engine: ScriptedEngine; bridge: SseBridge; sink: RecordingSink }> {
  const engine = await startScriptedEngine({ heartbeatMs: 50 });
  cleanups.push(() => engine.close());
  const sink = recordingSink();
  const bridge = new SseBridge({
    url: `${engine.url}/v1/admin/events/stream`,
    token: engine.token,
    idleMs: 2_000,
    sink,
    fillFrom: options.store ? memoryStore(options.store) : null,
    logger: quietLogger,
    metrics: noMetrics(),
    backoffBaseMs: 10,
    backoffMaxMs: 50,
  });
  cleanups.push(() => bridge.stop());
  return { engine, bridge, sink };
}

describe('SseBridge', () => {
  it('hands the sink every event once, in order, with its raw text, each received chunk in one batch', async () => {
    const { engine, bridge, sink } = await setup();
    bridge.start(0);
    await waitFor(() => bridge.connected, 5_000, 'connected');
    engine.push(event(1), event(2), event(3));
    await waitFor(() => sink.delivered.length === 3, 5_000, 'three events');
    expect(sink.seqs()).toEqual([1, 2, 3]);
    expect(bridge.position).toBe(3);
    // The text as the engine sent it travels with the event (not enumerable: the envelope stays the engine's).
    expect(sink.delivered[0]!.raw).toBe(JSON.stringify(event(1)));
    expect(Object.keys(sink.delivered[0]!)).not.toContain('raw');
    // Every sink call for an event is inside a batch.
    let depth = 0;
    for (const x of sink.log) {
      if (x === '[') depth++;
      else if (x === ']') depth--;
      else expect(depth, `${x} outside a batch`).toBeGreaterThan(0);
    }
  });

  it('after a drop resumes one event early, compares it, and delivers nothing twice', async () => {
    const { engine, bridge, sink } = await setup();
    bridge.start(0);
    await waitFor(() => bridge.connected, 5_000, 'connected');
    engine.push(event(1), event(2));
    await waitFor(() => sink.delivered.length === 2, 5_000, 'two events');
    engine.dropAll();
    await waitFor(() => engine.connections.length >= 2 && bridge.connected, 5_000, 'reconnected');
    expect(engine.connections.at(-1)!.lastEventId).toBe('1');
    engine.push(event(3));
    await waitFor(() => sink.delivered.length === 3, 5_000, 'third event');
    expect(sink.seqs()).toEqual([1, 2, 3]);
  });

  it('ignores duplicates, and asks the engine again for a skipped seq instead of delivering past it', async () => {
    const { engine, bridge, sink } = await setup();
    bridge.start(0);
    await waitFor(() => bridge.connected, 5_000, 'connected');
    engine.push(event(1), event(2));
    await waitFor(() => sink.delivered.length === 2, 5_000, 'two events');
    engine.writeRaw(event(2)); // a repeat
    engine.writeRaw(event(4)); // seq 3 skipped
    await waitFor(() => engine.connections.length >= 2, 5_000, 'asked again');
    engine.push(event(3), event(4));
    await waitFor(() => sink.delivered.length === 4, 5_000, 'four events');
    expect(sink.seqs()).toEqual([1, 2, 3, 4]);
    expect(sink.log.some((x) => x.startsWith('skipped'))).toBe(false);
  });

  it('fills what the engine no longer holds (410) from the store, in order, before live events', async () => {
    const stored = Array.from({ length: 6 }, (_, i) => event(i + 1));
    const { engine, bridge, sink } = await setup({ store: stored });
    engine.push(...stored, event(7));
    engine.oldestSeq = 5; // since=0 is before retention
    bridge.start(0);
    await waitFor(() => sink.delivered.length === 7, 5_000, 'seven events');
    expect(sink.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(engine.connections[0]!.status).toBe(410);
    expect(bridge.gap).toBeUndefined();
  });

  it('skips and reports what neither the engine nor the store holds, telling the sink before the next event', async () => {
    const { engine, bridge, sink } = await setup({ store: [event(1), event(2)] });
    engine.push(...Array.from({ length: 6 }, (_, i) => event(i + 1)));
    engine.oldestSeq = 5;
    bridge.start(0);
    await waitFor(() => sink.delivered.length === 4, 5_000, 'events around the gap');
    expect(sink.seqs()).toEqual([1, 2, 5, 6]);
    expect(sink.log.filter((x) => !'[]'.includes(x))).toEqual(['e1', 'e2', 'skipped4', 'e5', 'e6']);
    expect(bridge.gap).toBe('events 3..4 unavailable (engine retention and database)');
  });

  it('an engine whose every stream is a line that never ends is reconnected to with the backoff, not as fast as it sends', async () => {
    // A busy engine (its head far ahead) whose streams all carry an endless `data:` line: each drop
    // passes the next event (from the store here), but a second drop in a row before any event is
    // garbage, not an event of the history, and waits its backoff (random 1: the whole cap).
    const opened: number[] = [];
    const flood = createServer((req, res) => {
      opened.push(Date.now());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: ');
      const chunk = 'x'.repeat(16_384);
      const pump = (): void => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', pump);
      };
      pump();
      req.on('close', () => res.destroy());
    });
    await new Promise<void>((resolve) => flood.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => flood.close(() => resolve())));
    const sink = recordingSink();
    const metrics = noMetrics();
    const bridge = new SseBridge({
      url: `http://127.0.0.1:${(flood.address() as AddressInfo).port}/v1/admin/events/stream`,
      token: 't',
      idleMs: 10_000,
      sink,
      fillFrom: memoryStore(Array.from({ length: 50 }, (_, i) => event(i + 1))),
      engineHead: () => Promise.resolve(1_000),
      logger: quietLogger,
      metrics,
      maxEventBytes: 4_096,
      backoffBaseMs: 200,
      backoffMaxMs: 5_000,
      random: () => 1,
    });
    cleanups.push(() => bridge.stop());
    bridge.start(0);
    await waitFor(() => opened.length >= 5, 15_000, 'five connections');
    await bridge.stop();
    // The first drop is passed at once; from the second in a row on, each waits the doubling backoff.
    const gaps = opened.slice(1).map((t, i) => t - opened[i]!);
    expect(gaps[1]).toBeGreaterThanOrEqual(200);
    expect(gaps[2]).toBeGreaterThanOrEqual(400);
    expect(gaps[3]).toBeGreaterThanOrEqual(800);
    // Passing went on meanwhile: the events after the resume point came from the store, in order.
    expect(sink.seqs()).toEqual(Array.from({ length: sink.seqs().length }, (_, i) => i + 1));
    expect(sink.seqs().length).toBeGreaterThanOrEqual(2);
  });

  it('on a replaced history awaits the sink before delivering anything of the new one', async () => {
    const { engine, bridge, sink } = await setup();
    bridge.start(0);
    await waitFor(() => bridge.connected, 5_000, 'connected');
    engine.push(event(1), event(2), event(3));
    await waitFor(() => sink.delivered.length === 3, 5_000, 'old history');
    sink.holdReplaced = true;
    engine.reset();
    const other = (seq: number) => event(seq, { kind: 'inbound.deposit', payload: { other: seq } });
    engine.push(other(1), other(2), other(3), other(4), other(5));
    await waitFor(() => sink.log.includes('replaced3'), 5_000, 'told of the replacement');
    // Nothing of the new history while the sink has not finished its reset.
    await waitFor(() => engine.connections.length >= 2, 5_000, 'reconnected');
    expect(sink.seqs()).toEqual([1, 2, 3]);
    sink.releaseReplaced();
    await waitFor(() => sink.delivered.length === 5, 5_000, 'new history after its head');
    expect(sink.delivered.slice(3).map((e) => [e.seq, e.kind])).toEqual([
      [4, 'inbound.deposit'],
      [5, 'inbound.deposit'],
    ]);
    expect(bridge.gap).toMatch(/engine history replaced/);
  });
});
