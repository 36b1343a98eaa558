// How long this process's event loop was held, for the message rate bound (inbound-limit.ts):
// while the loop is held, a client's messages wait in the kernel and are then read at once, so a
// client that sent within its rate finds them counted as a burst. The bound credits the time the
// loop was held (ADR 0381); it must not credit time a client was merely idle.
//
// Guarantees:
// - `heldSince(at, now)` is at most `now - at`, and at most MAX_CREDIT_MS;
// - it counts a stall still going on (the meter's own timer not run yet) as well as ended ones;
// - a turn of the loop shorter than the meter's period counts for nothing (no credit from jitter).
import type { Clock, Repeating } from '../contracts/clock.js';
import { repeatOn } from '../contracts/clock.js';

/** The meter's period: a turn held longer than this is a stall. */
export const STALL_PERIOD_MS = 50;
/** Past this the process is broken, not slow: no more is credited. */
export const MAX_CREDIT_MS = 10_000;
/** Stalls remembered: enough for any connection that read since the oldest of them. */
const KEPT = 16;

export class LoopStalls {
  /** When the meter's timer last ran. */
  private tick: number;
  /** Ended stalls, a ring: when each ended and how long the loop was held. */
  private readonly endedAt = new Float64Array(KEPT);
  private readonly heldMs = new Float64Array(KEPT);
  private next = 0;
  private timer: Repeating | null = null;

  constructor(readonly clock: Clock) {
    this.tick = clock.now();
  }

  /** Starts the meter (its timer is unref'd: it keeps no process alive). */
  start(): void {
    if (this.timer) return;
    this.tick = this.clock.now();
    this.timer = repeatOn(this.clock, STALL_PERIOD_MS, () => this.onTick());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  now(): number {
    return this.clock.now();
  }

  /** Ms the loop was held between `at` and `now` (guarantees above). */
  heldSince(at: number, now: number): number {
    if (!this.timer) return 0;
    const going = now - this.tick - STALL_PERIOD_MS;
    let held = going < STALL_PERIOD_MS ? 0 : going;
    for (let i = 0; i < KEPT; i++) if (this.endedAt[i]! > at) held += this.heldMs[i]!;
    return Math.min(held, now - at, MAX_CREDIT_MS);
  }

  private onTick(): void {
    const now = this.clock.now();
    const held = now - this.tick - STALL_PERIOD_MS;
    this.tick = now;
    if (held < STALL_PERIOD_MS) return;
    this.endedAt[this.next] = now;
    this.heldMs[this.next] = held;
    this.next = (this.next + 1) % KEPT;
  }
}
