/**
 * The engine's event log: assigns seq (1, 2, 3, … across the whole engine), keeps the last
 * `retention` events for replay as pre-rendered SSE frames, and notifies subscribers.
 */
import type { EngineEvent } from './types.js';

export interface AppendInput {
  kind: string;
  market?: string | undefined;
  party?: string | undefined;
  payload: Record<string, unknown>;
}

let isoMs = Number.NaN;
let isoText = '';

/** `new Date(ms).toISOString()`, memoized for the last millisecond (many events share one). */
export function isoTime(ms: number): string {
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

/** Called synchronously for each appended event, with its JSON text (the SSE `data:` line). */
export type Subscriber = (event: EngineEvent, json: string) => void;

export class EventLog {
  private readonly frames: (string | undefined)[];
  private readonly subscribers = new Set<Subscriber>();
  private seq = 0;

  constructor(
    readonly retention: number,
    private readonly clock: () => number = Date.now,
  ) {
    if (!Number.isInteger(retention) || retention < 1) throw new Error('retention must be a positive integer');
    this.frames = new Array<string | undefined>(retention);
  }

  get maxSeq(): number {
    return this.seq;
  }

  /** Oldest seq still held for replay (maxSeq + 1 when nothing was ever appended). */
  get oldestSeq(): number {
    return Math.max(1, this.seq - this.retention + 1);
  }

  append(input: AppendInput): EngineEvent {
    const seq = ++this.seq;
    // Keys in sorted order (kind, market, party, payload, seq, ts): the envelope is then already
    // canonical JSON for the commitments (see commitments.ts).
    const event = { kind: input.kind } as EngineEvent;
    if (input.market !== undefined) event.market = input.market;
    if (input.party !== undefined) event.party = input.party;
    event.payload = input.payload;
    event.seq = seq;
    event.ts = isoTime(this.clock());
    const json = JSON.stringify(event);
    this.frames[seq % this.retention] = `id: ${seq}\nevent: ${input.kind}\ndata: ${json}\n\n`;
    for (const s of this.subscribers) s(event, json);
    return event;
  }

  /** The SSE frame of `seq`, or undefined when it is outside retention or not yet written. */
  frame(seq: number): string | undefined {
    if (seq < this.oldestSeq || seq > this.seq) return undefined;
    return this.frames[seq % this.retention];
  }

  /** Parsed events with seq > since (for tests and tooling; the SSE path uses frames). */
  eventsSince(since: number): EngineEvent[] {
    const out: EngineEvent[] = [];
    for (let s = Math.max(since + 1, this.oldestSeq); s <= this.seq; s++) {
      const f = this.frames[s % this.retention];
      if (f === undefined) continue;
      const dataLine = f.slice(f.indexOf('\ndata: ') + 7, -2);
      out.push(JSON.parse(dataLine) as EngineEvent);
    }
    return out;
  }

  subscribe(fn: Subscriber): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }
}
