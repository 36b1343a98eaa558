// A recording EngineEventSink and the quiet logger and metrics the engine event sources need in tests.
import pino from 'pino';
import type { EngineEvent } from '../../src/contracts/engine-event.js';
import type { EngineEventSink } from '../../src/contracts/engine-event-source.js';
import type { SourceMetrics } from '../../src/engine/ordered-delivery.js';

export const quietLogger = pino({ level: 'silent' });

export function noMetrics(): SourceMetrics & { maxSeqValue: number | null; eventCount: number } {
  const m = {
    maxSeqValue: null as number | null,
    eventCount: 0,
    reconnects: { inc() {} },
    lagSeconds: { set() {} },
    maxSeq: { set: (v: number) => void (m.maxSeqValue = v) },
    events: { inc: () => void m.eventCount++ },
  };
  return m;
}

export const event = (seq: number, extra: Partial<EngineEvent> = {}): EngineEvent => ({
  seq,
  kind: 'engine.tick_start',
  ts: new Date(Date.UTC(2026, 10, 24, 12, 0, 0, seq)).toISOString(),
  payload: { tick: seq },
  ...extra,
});

/** What a sink saw, in the order it saw it: `e<seq>`, `skipped<seq>`, `replaced<head>`, `[`/`]` around each `events` call. */
export interface RecordingSink extends EngineEventSink {
  log: string[];
  delivered: EngineEvent[];
  seqs(): number[];
  /** Held open until released: what `replaced` returns (the source must await it). */
  holdReplaced: boolean;
  releaseReplaced(): void;
}

export function recordingSink(options: { throwOn?: number } = {}): RecordingSink {
  let release: (() => void) | null = null;
  const sink: RecordingSink = {
    log: [],
    delivered: [],
    holdReplaced: false,
    seqs: () => sink.delivered.map((e) => e.seq),
    events(batch) {
      sink.log.push('[');
      for (const e of batch) {
        sink.log.push(`e${e.seq}`);
        sink.delivered.push(e);
      }
      sink.log.push(']');
      if (batch.some((e) => e.seq === options.throwOn)) throw new Error('projection bug');
    },
    skipped(seq) {
      sink.log.push(`skipped${seq}`);
    },
    replaced(head) {
      sink.log.push(`replaced${head}`);
      if (!sink.holdReplaced) return Promise.resolve();
      return new Promise<void>((resolve) => (release = resolve));
    },
    releaseReplaced() {
      release?.();
      release = null;
    },
  };
  return sink;
}

/** An in-memory `events` table: fillFrom(after, limit). */
export function memoryStore(events: EngineEvent[]): (after: number, limit: number) => Promise<EngineEvent[]> {
  return async (after, limit) => events.filter((e) => e.seq > after).slice(0, limit);
}
