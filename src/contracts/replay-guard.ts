// The replay memory's seam: the auth layer asks it (src/auth/), the in-process memory
// (auth/replay-guard.ts) and the fleet's Redis memory (fleet/redis-replay-guard.ts) implement it.

export interface ReplayGuard {
  /**
   * true the first time `key` is offered within `ttlMs`, false on every later offer while it is
   * remembered. Throws when the key cannot be remembered (fails closed): ReplayMemoryFull from the
   * in-process memory, SharedStateUnavailableError from a shared one.
   */
  firstUse(key: string, ttlMs: number): Promise<boolean>;
}
