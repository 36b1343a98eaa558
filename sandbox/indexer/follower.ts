// Follows the engine's admin SSE stream (undici + eventsource-parser) from a given seq and hands
// parsed events to a sink, reconnecting with exponential backoff. Each reconnect resumes from the
// last seq handed over (`Last-Event-ID` and `?since=`), so no event is skipped or repeated; a seq
// that does not follow the previous one drops the connection and resumes from the last good seq.
import { createParser } from 'eventsource-parser';
import { Agent, request } from 'undici';
import type { EngineEvent } from './rows.js';

export interface FollowerOptions {
  engineUrl: string;
  adminToken: string;
  /** Last seq already handed to the sink (0 = from the beginning). */
  from: number;
  /** Receives events in seq order. A returned promise pauses reading (backpressure). */
  sink(events: EngineEvent[]): void | Promise<void>;
  /** Called before every connection attempt; may throw to delay it (e.g. an engine reset check). */
  beforeConnect?(since: number): Promise<void>;
  log: (level: 'info' | 'warn' | 'error', msg: string, extra?: object) => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Drop a connection that sent nothing (not even a heartbeat) for this long. */
  idleMs?: number;
}

export class Follower {
  private last: number;
  private stopped = false;
  private abort: AbortController | null = null;
  private readonly agent = new Agent({ bodyTimeout: 0, headersTimeout: 10_000, connect: { timeout: 5_000 } });
  connects = 0;
  connected = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: FollowerOptions) {
    this.last = options.from;
  }

  get lastSeq(): number {
    return this.last;
  }

  /** Restart from another seq (after a wipe). Takes effect on the next connection. */
  resetTo(seq: number): void {
    this.last = seq;
    this.abort?.abort();
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    await this.loop?.catch(() => {});
    await this.agent.close().catch(() => {});
  }

  private async run(): Promise<void> {
    const min = this.options.minBackoffMs ?? 100;
    const max = this.options.maxBackoffMs ?? 5_000;
    let backoff = min;
    while (!this.stopped) {
      const before = this.last;
      try {
        await this.options.beforeConnect?.(this.last);
        await this.once();
      } catch (err) {
        if (this.stopped) break;
        this.options.log('warn', 'engine event stream failed', { err: (err as Error).message, since: this.last });
      }
      this.connected = false;
      if (this.stopped) break;
      backoff = this.last > before ? min : Math.min(max, backoff * 2);
      await sleep(backoff + Math.floor(Math.random() * min));
    }
  }

  private async once(): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    const since = this.last;
    const res = await request(`${this.options.engineUrl}/v1/admin/events/stream?since=${since}`, {
      dispatcher: this.agent,
      signal: abort.signal,
      headers: { authorization: `Bearer ${this.options.adminToken}`, accept: 'text/event-stream', 'last-event-id': String(since) },
    });
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      throw new Error(`stream answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    }
    this.connects++;
    this.connected = true;
    this.options.log('info', 'engine event stream connected', { since });
    let batch: EngineEvent[] = [];
    let broken: string | null = null;
    const parser = createParser({
      onEvent: (m) => {
        if (broken) return;
        let e: EngineEvent;
        try {
          e = JSON.parse(m.data) as EngineEvent;
        } catch {
          broken = `unparseable event data after seq ${this.last}`;
          return;
        }
        if (!Number.isSafeInteger(e.seq) || typeof e.kind !== 'string') {
          broken = `event without seq/kind after seq ${this.last}`;
          return;
        }
        if (e.seq <= this.last) return; // already handed over (overlap on resume)
        if (e.seq !== this.last + 1) {
          broken = `gap: expected seq ${this.last + 1}, got ${e.seq}`;
          return;
        }
        this.last = e.seq;
        batch.push(e);
      },
    });
    const decoder = new TextDecoder('utf-8'); // stream mode: a character split across chunks stays whole
    const idleMs = this.options.idleMs ?? 45_000;
    let idle = setTimeout(() => abort.abort(), idleMs);
    try {
      for await (const chunk of res.body) {
        clearTimeout(idle);
        idle = setTimeout(() => abort.abort(), idleMs);
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        if (batch.length > 0) {
          const out = batch;
          batch = [];
          await this.options.sink(out);
        }
        if (broken) throw new Error(broken);
        if (this.stopped) break;
      }
    } finally {
      clearTimeout(idle);
      res.body.destroy();
    }
    if (!this.stopped) throw new Error('stream ended');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
