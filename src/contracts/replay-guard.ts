// The replay memory's seam: the auth layer asks it (src/auth/), the in-process memory
// (auth/replay-guard.ts) and the fleet's Redis memory (fleet/redis-replay-guard.ts) implement it.

export interface ReplayGuard {
  /**
   * The signing window (ms, either way) this memory is kept for (SIGNATURE_WINDOW_MS); the
   * verifier uses it, since what the memory must cover is exactly what the window lets in.
   */
  readonly windowMs?: number;
  /**
   * true the first time `key` is offered within `ttlMs`, false on every later offer while it is
   * remembered. Throws when the key cannot be remembered (fails closed): ReplayMemoryFull from the
   * in-process memory, SharedStateUnavailableError from a shared one (also when the shared memory
   * was lost and `signedAtMs`, the signature's timestamp, is from before the loss plus the window).
   */
  firstUse(key: string, ttlMs: number, signedAtMs: number): Promise<boolean>;
  /**
   * `firstUse` of many keys in one exchange (a batch's signatures, spent once the engine accepted
   * them): one answer per entry, in order. A shared store answers them in one round trip instead of
   * one per key. Throws as `firstUse` would for any of them; then none is known to be remembered.
   * Absent: the caller offers them one by one (signed-request.ts spendEngineVerifiedMany).
   */
  firstUseMany?(entries: readonly ReplayEntry[]): Promise<boolean[]>;
  /**
   * Whether each key is remembered now (spent), without offering it: a concurrent batch asks this of
   * the items it sends without checking their signatures first, so that one the gateway spent
   * without the engine seeing it (a skipped item) is refused, not sent (one exchange for all).
   * Throws as `firstUse` does when the memory cannot answer.
   */
  spent(keys: readonly string[]): Promise<boolean[]>;
}

/** One key offered to `firstUseMany`, with `firstUse`'s arguments. */
export interface ReplayEntry {
  key: string;
  ttlMs: number;
  signedAtMs: number;
}
