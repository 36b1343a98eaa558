// Remembers accepted (sessionId, signature) pairs for as long as their timestamp could still pass
// the ±30 s window, so the same signed request cannot be replayed. Memory is bounded by that
// window: entries are dropped once their timestamp has aged out.

/** What the guards ask (src/fleet/redis-replay-guard.ts keeps it in Redis for a fleet). */
export interface ReplayGuard {
  /** true the first time `key` is seen within `ttlMs`; false for a replay. May throw an ApiError (503). */
  firstUse(key: string, ttlMs: number): Promise<boolean>;
}

export class ReplayCache implements ReplayGuard {
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    private readonly horizonMs: number,
    private readonly maxEntries = 1_000_000,
  ) {}

  async firstUse(key: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    // Stored as if its timestamp were (expiry - horizon): the sweep forgets it at now + ttlMs.
    return this.remember(key, '', now + ttlMs - this.horizonMs, now);
  }

  /** false when this signature was already accepted. */
  remember(sessionId: string, sig: string, tsMs: number, now: number): boolean {
    this.sweep(now);
    const key = `${sessionId}|${sig}`;
    if (this.seen.has(key)) return false;
    if (this.seen.size >= this.maxEntries) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    this.seen.set(key, tsMs);
    return true;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 1_000) return;
    this.lastSweep = now;
    for (const [key, ts] of this.seen) if (now - ts > this.horizonMs) this.seen.delete(key);
  }
}
