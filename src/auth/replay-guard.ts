// Replay memory of verified signatures. A signed request may be used once: the gateway remembers
// the key of what it verified (session id, canonical timestamp, signature bytes) for as long as
// that timestamp could still pass the ±30 s window, and refuses the key a second time.
//
// Behind a small async interface so a shared store (one memory for every replica) can replace the
// in-process one. The in-process memory is bounded (REPLAY_MEMORY_MAX entries); when it is full of
// still-valid entries it refuses new signatures (ReplayMemoryFull, answered 503 `replay_memory_full`)
// rather than forgetting one that could still be replayed: failing closed.
//
// It does not survive the process: a signature captured in the last window can be replayed once
// after a restart. Trading calls are judged again by the engine's own replay memory; a signed read
// or stream proof is exposed for one window. The fleet's Redis memory closes that (docs/adr/0155
// says why this one does not refuse every signature for a window after each start).

import type { ReplayEntry, ReplayGuard } from '../contracts/replay-guard.js';

export class ReplayMemoryFull extends Error {
  constructor(readonly maxEntries: number) {
    super(`the replay memory holds its maximum of ${maxEntries} unexpired signatures`);
    this.name = 'ReplayMemoryFull';
  }
}

/** The default ReplayGuard: one Map in process memory, swept of expired keys. */
export class MemoryReplayGuard implements ReplayGuard {
  /** key → expiry (ms). */
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    readonly maxEntries = 1_000_000,
    private readonly clock: () => number = Date.now,
    readonly windowMs?: number,
  ) {}

  async firstUse(key: string, ttlMs: number): Promise<boolean> {
    return this.firstUseNow(key, ttlMs);
  }

  async firstUseMany(entries: readonly ReplayEntry[]): Promise<boolean[]> {
    return entries.map((e) => this.firstUseNow(e.key, e.ttlMs));
  }

  async spent(keys: readonly string[]): Promise<boolean[]> {
    const now = this.clock();
    return keys.map((key) => (this.seen.get(key) ?? 0) > now);
  }

  /** Synchronous core (the interface is async for shared stores). */
  firstUseNow(key: string, ttlMs: number): boolean {
    const now = this.clock();
    const expiry = this.seen.get(key);
    if (expiry !== undefined && expiry > now) return false;
    if (now - this.lastSweep >= 1_000) this.sweep(now);
    if (this.seen.size >= this.maxEntries) {
      this.sweep(now);
      if (this.seen.size >= this.maxEntries) throw new ReplayMemoryFull(this.maxEntries);
    }
    this.seen.set(key, now + Math.max(0, ttlMs));
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, expiry] of this.seen) if (expiry <= now) this.seen.delete(key);
  }
}
