// How far a fleet replica is behind the ENGINE (not behind its own last event): the engine's head
// is observed from outside the replica's event path (the engine's `GET /healthz` maxSeq, else the
// JetStream stream's last message), and the replica's position is compared with it. A replica that
// receives nothing while the engine moves on is therefore seen as falling further behind every
// second; "time since my last event" would call a quiet market and a dead consumer the same.
//
// seconds: how long ago the replica last held everything the engine had. It is the observation
// time of the newest head the replica has reached, so it grows by one per second during a stall
// and is 0 while the replica holds the newest head observed (observed recently). When no head can
// be observed at all (engine and NATS both out of reach) it keeps growing too: the replica cannot
// claim to be current.

import { systemClock, type Clock } from '../contracts/clock.js';

/** A head observation older than this no longer proves that the replica is current. */
export const HEAD_FRESH_MS = 5_000;

export interface LagSnapshot {
  /** The engine's newest seq as last observed, null before any observation. */
  engineHead: number | null;
  /** engineHead − position (0 when at or past it); null when either is unknown. */
  events: number | null;
  seconds: number;
}

export class EngineLag {
  private head: number | null = null;
  private headAt = 0;
  /** When the newest head the replica has reached was observed. */
  private syncedAt: number;
  /** Heads observed and not yet reached, oldest first (at most one per observation). */
  private pending: Array<{ head: number; at: number }> = [];

  /** `position`: the replica's last delivered seq; null (nothing received yet) counts as 0. */
  constructor(
    private readonly position: () => number | null,
    private readonly clock: Clock = systemClock,
  ) {
    this.syncedAt = clock.now();
  }

  /** The engine's head as just observed. */
  observe(head: number, now = this.clock.now()): void {
    if (this.head === null || head >= this.head) {
      this.head = head;
      this.headAt = now;
    }
    const pending = this.pending;
    if (pending.length === 0 || pending[pending.length - 1]!.head < head) pending.push({ head, at: now });
    else pending[pending.length - 1]!.at = now;
    if (pending.length > 64) pending.shift();
    this.settle();
  }

  /** The history was replaced: the old head means nothing for the new one. */
  reset(now = this.clock.now()): void {
    this.head = null;
    this.pending = [];
    this.syncedAt = now;
  }

  /** Moves `syncedAt` to the newest observed head the position has reached. */
  private settle(): void {
    const pos = this.position() ?? 0;
    while (this.pending.length > 0 && this.pending[0]!.head <= pos) {
      this.syncedAt = Math.max(this.syncedAt, this.pending.shift()!.at);
    }
  }

  snapshot(now = this.clock.now()): LagSnapshot {
    this.settle();
    const pos = this.position() ?? 0;
    const head = this.head;
    const events = head === null ? null : Math.max(0, head - pos);
    const fresh = now - this.headAt <= HEAD_FRESH_MS;
    const seconds = events === 0 && fresh ? 0 : Math.max(0, now - this.syncedAt) / 1000;
    return { engineHead: head, events, seconds };
  }
}
