// One value, refreshed at most once per `ttlMs`: concurrent callers of a stale value share one
// load, and a failed load is not cached (the next caller tries again).
export class TtlCache<T> {
  private value: { data: T; at: number } | null = null;
  private loading: Promise<T> | null = null;

  constructor(
    private readonly load: () => Promise<T>,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    const v = this.value;
    if (v && this.now() - v.at < this.ttlMs) return Promise.resolve(v.data);
    this.loading ??= this.load().then(
      (data) => {
        this.value = { data, at: this.now() };
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
