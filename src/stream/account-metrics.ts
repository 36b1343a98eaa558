// bff_account_parties{state}: the accounts the account book holds (docs/account.md "How long a
// party stays"), read at scrape time; bff_account_evictions_total: complete parties let go.
//   complete    complete accounts in memory (held by connections or kept for recent reads)
//   held        parties a stream connection needs (account.update), complete or being seeded
//   incomplete  other parties' recent changes, kept until the database has them
import { Counter, Gauge, type Registry } from 'prom-client';

interface Counted {
  counts(): { complete: number; held: number; incomplete: number };
}

const byRegistry = new WeakMap<Registry, AccountMetrics>();

export class AccountMetrics {
  /** One set per registry (prom-client refuses a second registration of a name); the newest book is reported. */
  static for(registry: Registry): AccountMetrics {
    let m = byRegistry.get(registry);
    if (!m) byRegistry.set(registry, (m = new AccountMetrics(registry)));
    return m;
  }

  private book: Counted | null = null;
  readonly evictions: Counter;

  private constructor(registry: Registry) {
    const registers = [registry];
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- prom-client calls collect with the metric as `this`
    const metrics = this;
    new Gauge({
      name: 'bff_account_parties',
      help: 'Parties the account book holds, by state: complete (kept by a stream connection or a recent read), held (needed by a stream connection), incomplete (recent changes only)',
      labelNames: ['state'],
      registers,
      collect() {
        const c = metrics.book?.counts() ?? { complete: 0, held: 0, incomplete: 0 };
        this.set({ state: 'complete' }, c.complete);
        this.set({ state: 'held' }, c.held);
        this.set({ state: 'incomplete' }, c.incomplete);
      },
    });
    this.evictions = new Counter({
      name: 'bff_account_evictions_total',
      help: 'Complete accounts evicted (idle past ACCOUNT_IDLE_MS or over ACCOUNT_READ_PARTIES_MAX); seeded again on their next read',
      registers,
    });
  }

  watch(book: Counted): void {
    this.book = book;
  }
}
