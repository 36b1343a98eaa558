// Which complete accounts the account book keeps (docs/account.md "How long a party stays", ADR
// 0082). A party stays complete while a stream connection needs it (counted per party: a
// connection that asks for `account.update` with that party, from its URL or a subscribe message,
// until an unsubscribe or its close), or while a REST read touched it within `idleMs`; of the
// parties kept for reads alone at most `maxRead`, the least recently read going first. What is let
// go is told to `evict` (the book drops it; its next read seeds it again from the database).
//
// Reads are kept in a Map in the order of their last touch (delete + set), so the oldest is its
// first entry: a touch, a hold or a release is O(1), an eviction O(1) per party evicted.

export interface RetentionOptions {
  /** A party kept for reads alone is let go this long after its last read (or its last connection's close). */
  idleMs: number;
  /** Most parties kept for reads alone; past it the least recently read is let go at once. */
  maxRead: number;
  /** Drops a party's complete account. */
  evict(party: string): void;
  /** Only a complete party is kept for reads (one whose seed failed is not). */
  isComplete(party: string): boolean;
}

export class PartyRetention {
  /** party → the stream connections that need it. */
  private readonly holds = new Map<string, number>();
  /** party → time of its last read (ms), oldest first; never a held party. */
  private readonly reads = new Map<string, number>();

  constructor(private readonly options: RetentionOptions) {}

  /** A REST read (or a connection's snapshot) of a complete party, at `now`. */
  touch(party: string, now: number): void {
    if (this.holds.has(party) || !this.options.isComplete(party)) return;
    this.reads.delete(party);
    this.reads.set(party, now);
    this.trim(now);
  }

  /** Connections took (`+1`) or released (`-1`) the parties; a party released by its last one is kept as if just read. */
  hold(parties: Iterable<string>, delta: 1 | -1, now: number): void {
    for (const party of parties) {
      const n = (this.holds.get(party) ?? 0) + delta;
      if (n > 0) {
        this.holds.set(party, n);
        this.reads.delete(party);
        continue;
      }
      this.holds.delete(party);
      this.touch(party, now);
    }
  }

  /** Lets go the parties read longer than `idleMs` ago, and those over `maxRead`. */
  trim(now: number): void {
    const { idleMs, maxRead } = this.options;
    for (const [party, at] of this.reads) {
      if (this.reads.size <= maxRead && now - at < idleMs) break;
      this.reads.delete(party);
      this.options.evict(party);
    }
  }

  isHeld(party: string): boolean {
    return this.holds.has(party);
  }

  heldParties(): IterableIterator<string> {
    return this.holds.keys();
  }

  get held(): number {
    return this.holds.size;
  }

  /** The engine history was replaced: every complete account is gone (the holds stay with their connections). */
  clearReads(): void {
    this.reads.clear();
  }
}
