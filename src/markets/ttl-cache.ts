// One value, refreshed at most once per `ttlMs`: concurrent callers of a stale value share one
// load, and a failed load is not cached (the next caller tries again).
import { systemClock, type Clock } from '../contracts/clock.js';

export class TtlCache<T> {
  private value: { data: T; at: number } | null = null;
  private loading: Promise<T> | null = null;

  constructor(
    private readonly load: () => Promise<T>,
    readonly ttlMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  get(): Promise<T> {
    const v = this.value;
    if (v && this.clock.now() - v.at < this.ttlMs) return Promise.resolve(v.data);
    this.loading ??= this.load().then(
      (data) => {
        this.value = { data, at: this.clock.now() };
        this.loading = null;
        return data;
      },
      (err: unknown) => {
        this.loading = null;
        throw err;
      },
    );
    return this.loading;
  }
}

/**
 * Many values by key, each like a TtlCache: requests for a key share its load while it runs and its
 * value for `ttlMs` after it settled; failures are dropped at once. At most `maxKeys` keys are kept
 * (the oldest goes first), so hostile keys cannot grow it without bound.
 */
export class KeyedTtlCache<T> {
  private readonly entries = new Map<string, { settledAt: number | null; value: Promise<T> }>();

  constructor(
    readonly ttlMs: number,
    private readonly maxKeys = 1_000,
    private readonly clock: Clock = systemClock,
  ) {}

  get(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && (hit.settledAt === null || this.clock.now() - hit.settledAt < this.ttlMs)) return hit.value;
    this.entries.delete(key);
    if (this.entries.size >= this.maxKeys) this.entries.delete(this.entries.keys().next().value!);
    const entry: { settledAt: number | null; value: Promise<T> } = { settledAt: null, value: load() };
    this.entries.set(key, entry);
    entry.value.then(
      () => {
        entry.settledAt = this.clock.now();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.value;
  }

  get size(): number {
    return this.entries.size;
  }
}
