// The serialised answers of the proof route for batches the chain has committed (ADR 0063). A
// committed user batch does not change, so its answer is kept and served again after one cheap
// check: the chain's record and the engine's claim are read on every request (one index read), and
// an entry is used only when they are what they were when the answer was made (`identity`).
//
// What a cached answer can hide, and why it is bounded: the batch's events are not read again
// while the entry lives. An event of the mirror altered after the answer was made (the indexer
// only appends; this is an operator's or an attacker's change) shows in the proof after at most
// `ttlMs`. Only `verified` answers are kept: a `mismatch` is recomputed every time, so a repaired
// mirror shows at once, and `pending` answers change when the chain records the batch.
import { systemClock, type Clock } from '../contracts/clock.js';

export interface ProofCacheOptions<V> {
  maxBytes: number;
  ttlMs: number;
  /** Default systemClock. */
  clock?: Clock;
  /** The bytes a kept value counts for; default its `length` (a Buffer). */
  sizeOf?: (value: V) => number;
}

interface Entry<V> {
  identity: string;
  value: V;
  size: number;
  expires: number;
}

export class ProofCache<V extends object = Buffer> {
  private readonly entries = new Map<string, Entry<V>>();
  private bytes = 0;
  private readonly clock: Clock;

  constructor(private readonly options: ProofCacheOptions<V>) {
    this.clock = options.clock ?? systemClock;
  }

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  /** The answer kept for `key`, when it was made from the same chain record and claim, and is fresh. */
  get(key: string, identity: string): V | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.identity !== identity || entry.expires <= this.clock.now()) {
      this.remove(key, entry);
      return null;
    }
    // Least recently used first out: a hit moves to the end.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, identity: string, value: V): void {
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    const size = this.options.sizeOf ? this.options.sizeOf(value) : (value as unknown as Buffer).length;
    if (size > this.options.maxBytes) return;
    this.entries.set(key, { identity, value, size, expires: this.clock.now() + this.options.ttlMs });
    this.bytes += size;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.remove(k, e);
    }
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    this.bytes -= entry.size;
  }
}
