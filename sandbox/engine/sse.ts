/**
 * Admin SSE stream. Each connection is just a cursor (`next` seq) into the event log: replay and
 * live delivery are the same loop, so nothing is skipped or repeated whatever the timing. Writes
 * stop when `res.write` returns false and resume on 'drain' (the log is the only buffer); a client
 * that falls behind retention is dropped.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventLog } from './event-log.js';

const CHUNK_BYTES = 64 * 1024;

export interface SseOptions {
  /** Last seq the client already has; replay starts after it. undefined = live only. */
  since: number | undefined;
  heartbeatMs: number;
}

export class SseHub {
  private readonly conns = new Set<ServerResponse>();

  constructor(private readonly log: EventLog) {}

  get connections(): number {
    return this.conns.size;
  }

  open(_req: IncomingMessage, res: ServerResponse, opts: SseOptions): void {
    const log = this.log;
    let next = opts.since === undefined ? log.maxSeq + 1 : opts.since + 1;
    let paused = false;
    let scheduled = false;
    let closed = false;

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.socket?.setNoDelay(true);

    const drop = (): void => {
      if (closed) return;
      closed = true;
      res.destroy();
    };

    const pump = (): void => {
      scheduled = false;
      if (closed || paused) return;
      while (next <= log.maxSeq) {
        if (next < log.oldestSeq) {
          drop(); // fell behind retention: cannot deliver without a gap
          return;
        }
        let chunk = '';
        while (next <= log.maxSeq && chunk.length < CHUNK_BYTES) {
          chunk += log.frame(next)!;
          next++;
        }
        if (!res.write(chunk)) {
          paused = true;
          return;
        }
      }
    };

    const schedule = (): void => {
      if (paused && next < log.oldestSeq) {
        drop(); // a paused reader that fell behind retention can never catch up without a gap
        return;
      }
      if (!scheduled && !paused && !closed) {
        scheduled = true;
        setImmediate(pump);
      }
    };

    const unsubscribe = log.subscribe(schedule);
    const hb = setInterval(() => {
      if (closed || paused) return;
      if (!res.write(': hb\n\n')) paused = true;
    }, opts.heartbeatMs);
    hb.unref();

    res.on('drain', () => {
      paused = false;
      pump();
    });
    const cleanup = (): void => {
      closed = true;
      clearInterval(hb);
      unsubscribe();
      this.conns.delete(res);
    };
    res.on('close', cleanup);
    this.conns.add(res);

    if (!res.write(': connected\n\n')) paused = true;
    pump();
  }

  closeAll(): void {
    for (const res of this.conns) res.destroy();
    this.conns.clear();
  }
}
