// The JSON of list rows already written, kept by row VERSION so that a page whose rows are all known
// costs PostgreSQL only an index read of their keys (docs/adr/0104-list-rows-kept-by-version.md).
//
// A version is the row's key columns and its `xmin` (the id of the transaction that wrote that tuple).
// PostgreSQL gives a row a new tuple, with a new xmin, whenever it is updated, and a row deleted and
// inserted again (the indexer replacing a history) is a new tuple too: the same key with the same xmin
// is the same bytes. The only way round that is the transaction counter wrapping (2^32 transactions)
// while an entry is kept; entries live at most TTL_MS, far less than any database needs to wrap.
//
// A version means one content only within one database: a base backup restored in place, a failover
// or another database at the same address hands out the same transaction ids again with other
// content. Every statement that reads versions also reads the database's identity (page.ts
// DATABASE_IDENTITY, ADR 0116), and `bind` empties the cache when it is not the one the kept rows
// came from, before any of them is served.
//
// Guarantees: `get` answers only what `set` stored for exactly that version, of the database last
// bound, within TTL_MS; the kept bytes are bounded by `maxBytes` (least recently used first out); 0
// keeps nothing.
import { LRUCache } from 'lru-cache';

/** How long a kept row may be reused (see above: a bound on xmin reuse, not on staleness). */
export const TTL_MS = 10 * 60_000;

export interface RowCacheStats {
  hits: number;
  misses: number;
  bytes: number;
  rows: number;
  /** Times the database changed under kept rows (each emptied the cache). */
  databaseChanges: number;
}

export class RowCache {
  private readonly rows: LRUCache<string, Buffer> | null;
  private hits = 0;
  private misses = 0;
  private database: string | null = null;
  private changes = 0;

  constructor(readonly maxBytes: number) {
    this.rows = maxBytes > 0
      ? new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b, key) => b.length + key.length, ttl: TTL_MS })
      : null;
  }

  get enabled(): boolean {
    return this.rows !== null;
  }

  /**
   * The rows about to be read or kept are of `database` (its identity): a different one than the
   * kept rows' empties the cache first.
   */
  bind(database: string): void {
    if (database === this.database) return;
    if (this.database !== null) {
      this.rows?.clear();
      this.changes++;
    }
    this.database = database;
  }

  /** The JSON object of this row version, or undefined. */
  get(version: string): Buffer | undefined {
    const row = this.rows?.get(version);
    if (row === undefined) this.misses++;
    else this.hits++;
    return row;
  }

  set(version: string, json: Buffer): void {
    this.rows?.set(version, json);
  }

  stats(): RowCacheStats {
    return { hits: this.hits, misses: this.misses, bytes: this.rows?.calculatedSize ?? 0, rows: this.rows?.size ?? 0, databaseChanges: this.changes };
  }
}
