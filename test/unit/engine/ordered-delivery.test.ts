// OrderedDelivery: the ordering half of the EngineEventSink guarantees both engine event sources
// share (src/contracts/engine-event-source.ts): in order, at most once, holes filled from the store
// or reported and skipped, and a throwing sink never stops or repeats delivery.
import { describe, expect, it } from 'vitest';
import { OrderedDelivery, WakeableSleep } from '../../../src/engine/ordered-delivery.js';
import { event, memoryStore, noMetrics, quietLogger, recordingSink } from '../../support/delivery-support.js';
import { VirtualClock } from '../../support/virtual-clock.js';

function delivery(options: { startAfter?: number | null; store?: ReturnType<typeof memoryStore> | null; throwOn?: number; gapReportMs?: number; clock?: VirtualClock } = {}) {
  const sink = recordingSink({ throwOn: options.throwOn });
  const metrics = noMetrics();
  const d = new OrderedDelivery({
    sink,
    fillFrom: options.store ?? null,
    logger: quietLogger,
    metrics,
    gapReportMs: options.gapReportMs,
    ...(options.clock ? { clock: options.clock } : {}),
    label: 'test source',
    retention: 'test retention',
    stopped: () => false,
  });
  d.startAfter(options.startAfter ?? null);
  return { d, sink, metrics };
}

describe('OrderedDelivery', () => {
  it('delivers the events received together to the sink in one call, and tracks the position', () => {
    const { d, sink, metrics } = delivery({ startAfter: 4 });
    expect(d.last).toBe(4);
    expect(metrics.maxSeqValue).toBe(4);
    d.deliver([event(5)]);
    d.deliver([event(6)]);
    expect(sink.log).toEqual(['[', 'e5', ']', '[', 'e6', ']']);
    expect(d.last).toBe(6);
    expect(d.lastEvent?.seq).toBe(6);
    expect(metrics.maxSeqValue).toBe(6);
    expect(metrics.eventCount).toBe(2);
  });

  it('counts events whose sink call throws as delivered, and goes on with the next', () => {
    const { d, sink } = delivery({ startAfter: 0, throwOn: 2 });
    for (const seq of [1, 2, 3]) d.deliver([event(seq)]);
    expect(sink.seqs()).toEqual([1, 2, 3]);
    expect(d.last).toBe(3);
  });

  it('fills a hole from the store in pages, in order, each page as one batch, up to the end asked for', async () => {
    const stored = Array.from({ length: 2_500 }, (_, i) => event(i + 1));
    const { d, sink } = delivery({ startAfter: 0, store: memoryStore(stored) });
    await d.fillFromStore(2_200);
    expect(sink.seqs()).toEqual(stored.slice(0, 2_200).map((e) => e.seq));
    // Pages of 1 000: three batches, the last one stopped at the end asked for.
    expect(sink.log.filter((x) => x === '[')).toHaveLength(3);
    expect(d.last).toBe(2_200);
  });

  it('stops at a hole the store has too, and never skips over it by itself', async () => {
    const { d, sink } = delivery({ startAfter: 0, store: memoryStore([event(1), event(2), event(4), event(5)]) });
    await d.fillFromStore(null);
    expect(sink.seqs()).toEqual([1, 2]);
    expect(d.last).toBe(2);
    expect(sink.log).not.toContain('skipped3');
  });

  it('reports an unfillable gap: moves past it, tells the sink, and keeps the report while it is recent', async () => {
    const { d, sink } = delivery({ startAfter: 2, gapReportMs: 60_000 });
    d.report(3, 7);
    expect(d.last).toBe(7);
    expect(sink.log).toEqual(['skipped7']);
    expect(d.gap).toBe('events 3..7 unavailable (test retention and database)');
    d.deliver([event(8)]);
    expect(sink.seqs()).toEqual([8]);
  });

  it('an open-ended report moves nothing and tells the sink nothing', () => {
    const { d, sink } = delivery({ startAfter: 2 });
    d.report(3, null);
    expect(d.last).toBe(2);
    expect(sink.log).toEqual([]);
    expect(d.gap).toBe('events after 2 unavailable');
  });

  it('forgets a report once it is older than gapReportMs', async () => {
    const clock = new VirtualClock();
    const { d } = delivery({ startAfter: 2, gapReportMs: 20, clock });
    d.report(3, 4);
    expect(d.gap).toBeDefined();
    await clock.advance(20);
    expect(d.gap).toBeDefined(); // 20 ms old: not older than gapReportMs yet
    await clock.advance(1);
    expect(d.gap).toBeUndefined();
  });
});

describe('WakeableSleep', () => {
  it('wake() ends every sleep pending at once (two loops of one owner), and a later sleep runs its full time', async () => {
    const pause = new WakeableSleep();
    const at = Date.now();
    const first = pause.sleep(60_000);
    const second = pause.sleep(60_000); // before: the second replaced the first, which wake() then missed
    pause.wake();
    await Promise.all([first, second]);
    expect(Date.now() - at).toBeLessThan(5_000);
    const later = Date.now();
    await pause.sleep(30);
    expect(Date.now() - later).toBeGreaterThanOrEqual(25);
  });

  it('a sleep that ended by its own timer leaves the others wakeable', async () => {
    const pause = new WakeableSleep();
    const short = pause.sleep(10);
    const long = pause.sleep(60_000);
    await short; // before: its timer cleared the one pending entry, the long one's
    const at = Date.now();
    pause.wake();
    await long;
    expect(Date.now() - at).toBeLessThan(5_000);
  });
});
