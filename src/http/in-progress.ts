// How many requests of each key (a client address) are in progress: the count behind the bounds
// that refuse one more at once (the trading gate, TRADING_ADDRESS_IN_PROGRESS; the proof pages,
// PROOF_PAGES_PER_IP). A key with nothing in progress keeps no entry.
export class InProgress {
  private readonly counts = new Map<string, number>();

  held(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Counts one more of `key` unless it already holds `bound`: its release (idempotent), or null. */
  enter(key: string, bound: number): (() => void) | null {
    const n = this.held(key);
    if (n >= bound) return null;
    this.counts.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held(key) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }
}
