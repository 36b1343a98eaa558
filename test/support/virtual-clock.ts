// Virtual time for tests of timers (backoff, pings, switches, budgets, stalls, retention): a Clock
// (src/contracts/clock.ts) whose time moves only when the test says so. `advance(ms)` runs every
// timer that falls due on the way, in due order (ties in the order they were set), each at its
// own instant, and lets the promise jobs each one starts settle before the next runs.
import { sleepOn, type Clock, type ClockTimer } from '../../src/contracts/clock.js';

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

class VirtualTimer implements ClockTimer {
  constructor(readonly id: number) {}
  unref(): ClockTimer {
    return this;
  }
}

export class VirtualClock implements Clock {
  private time: number;
  private nextId = 1;
  private pending: Pending[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const id = this.nextId++;
    this.pending.push({ id, at: this.time + Math.max(0, ms), fn });
    return new VirtualTimer(id);
  }

  clearTimeout(timer: ClockTimer): void {
    const id = (timer as VirtualTimer).id;
    this.pending = this.pending.filter((p) => p.id !== id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Timers not yet run. */
  get timers(): number {
    return this.pending.length;
  }

  /** Moves time forward by `ms`, running each timer due on the way at its own instant. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await settle();
      const next = this.due(until);
      if (!next) break;
      this.pending = this.pending.filter((p) => p !== next);
      // A timer overdue after `hold` runs late, at the held time (time never goes back).
      this.time = Math.max(this.time, next.at);
      next.fn();
    }
    this.time = until;
    await settle();
  }

  /**
   * Moves time forward by `ms` without running any timer, as an event loop held by synchronous
   * work: the timers that fell due run late, at the next `advance`.
   */
  hold(ms: number): void {
    this.time += ms;
  }

  /** Runs timers until none is left (each at its instant); throws past `limit` to catch a timer that re-arms for ever. */
  async runAll(limit = 10_000): Promise<void> {
    for (let i = 0; i < limit; i++) {
      await settle();
      const next = this.due(Number.POSITIVE_INFINITY);
      if (!next) return;
      await this.advance(Math.max(0, next.at - this.time));
    }
    throw new Error(`VirtualClock.runAll: still ${this.pending.length} timers after ${limit} rounds`);
  }

  private due(until: number): Pending | undefined {
    let best: Pending | undefined;
    for (const p of this.pending) if (p.at <= until && (!best || p.at < best.at || (p.at === best.at && p.id < best.id))) best = p;
    return best;
  }
}

/** Lets queued promise jobs (and the ones they queue) run: a few macrotask turns. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
