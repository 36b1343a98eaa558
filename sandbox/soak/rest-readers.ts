// REST readers: a few loops reading the gateway's routes all through the run. Every answer must be
// 2xx/4xx or the documented 503/504, within the gateway's deadline; time the gateway spent stopped
// by the soak (SIGSTOP) is not held against it.
import { Agent, request } from 'undici';

export interface RestFinding {
  path: string;
  status: string;
  ms: number;
  at: number;
}

export interface RestTarget {
  /** Shown in findings. */
  label: string;
  url: string;
  headers?: () => Record<string, string>;
  /** The soak stops (SIGSTOP) this target's process at times: that time is not its latency. */
  pausable: boolean;
}

export class RestReaders {
  readonly statuses = new Map<string, number>();
  readonly bad: RestFinding[] = [];
  readonly slow: RestFinding[] = [];
  readonly latencies: number[] = [];
  /** The five slowest answers. */
  readonly slowest: RestFinding[] = [];
  requests = 0;
  /** Connection errors of requests that overlapped a gateway pause (not failures). */
  resetsAcrossPause = 0;
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private readonly agent = new Agent({ connections: 16 });

  constructor(
    private readonly targets: RestTarget[],
    /** An answer later than this (ms, after subtracting paused time) is a hang. */
    readonly hangMs: number,
    /** ms the gateway was stopped (SIGSTOP) between two instants. */
    private readonly pausedBetween: (from: number, to: number) => number,
  ) {}

  start(loops: number, pauseMs: number): void {
    for (let i = 0; i < loops; i++) this.loops.push(this.loop(i, pauseMs));
  }

  private async loop(offset: number, pauseMs: number): Promise<void> {
    for (let i = offset; !this.stopped; i++) {
      await this.read(this.targets[i % this.targets.length]!);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }

  private async read(target: RestTarget): Promise<void> {
    const path = target.label;
    const t0 = Date.now();
    let status: number | string;
    let code = '';
    try {
      const res = await request(target.url, {
        dispatcher: this.agent,
        ...(target.headers ? { headers: target.headers() } : {}),
        headersTimeout: this.hangMs * 3,
        bodyTimeout: this.hangMs * 3,
      });
      status = res.statusCode;
      if (status >= 500) {
        const body = (await res.body.json().catch(() => ({}))) as { code?: string };
        code = body.code ?? '';
      } else {
        await res.body.dump();
      }
    } catch (err) {
      status = (err as { code?: string }).code ?? (err as Error).name;
    }
    const t1 = Date.now();
    const ms = t1 - t0 - (target.pausable ? this.pausedBetween(t0, t1) : 0);
    this.requests++;
    this.latencies.push(ms);
    const key = code ? `${status} ${code}` : String(status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    const finding = { path, status: key, ms, at: t0 };
    // 2xx, 4xx, and the documented 5xx: 503 (database unavailable, not ready), 504 `engine_timeout`, and
    // 502 `engine_unavailable` (engine down or refusing: routes served by the engine, docs/trading.md).
    const acceptable =
      typeof status === 'number' &&
      ((status >= 200 && status < 500) || status === 503 || (status === 504 && code === 'engine_timeout') || (status === 502 && code === 'engine_unavailable'));
    // A connection reset on a request that overlapped a SIGSTOP of the gateway: its keep-alive
    // timers fire late on SIGCONT and close sockets a request was already sent on. Counted apart.
    const pausedReset = typeof status === 'string' && target.pausable && t1 - t0 > ms;
    if (pausedReset) this.resetsAcrossPause++;
    else if (!acceptable) this.bad.push(finding);
    if (ms > this.hangMs) this.slow.push(finding);
    if (this.slowest.length < 5 || ms > this.slowest.at(-1)!.ms) {
      this.slowest.push(finding);
      this.slowest.sort((a, b) => b.ms - a.ms);
      this.slowest.length = Math.min(this.slowest.length, 5);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
    await this.agent.close();
  }
}
