// The JSON of list rows already written, kept by row VERSION so that a page whose rows are all known
// costs PostgreSQL only an index read of their keys (docs/adr/0104-list-rows-kept-by-version.md).
//
// A version is the row's key columns and its `xmin` (the id of the transaction that wrote that tuple).
// PostgreSQL gives a row a new tuple, with a new xmin, whenever it is updated, and a row deleted and
// inserted again (the indexer replacing a history) is a new tuple too: the same key with the same xmin
// is the same bytes. The only way round that is the transaction counter wrapping (2^32 transactions)
// while an entry is kept; entries live at most TTL_MS, far less than any database needs to wrap.
//
// Guarantees: `get` answers only what `set` stored for exactly that version, within TTL_MS; the
// kept bytes are bounded by `maxBytes` (least recently used first out); 0 keeps nothing.
import { LRUCache } from 'lru-cache';

/** How long a kept row may be reused (see above: a bound on xmin reuse, not on staleness). */
export const TTL_MS = 10 * 60_000;

export interface RowCacheStats {
  hits: number;
  misses: number;
  bytes: number;
  rows: number;
}

export class RowCache {
  private readonly rows: LRUCache<string, Buffer> | null;
  private hits = 0;
  private misses = 0;

  constructor(readonly maxBytes: number) {
    this.rows = maxBytes > 0
      ? new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b, key) => b.length + key.length, ttl: TTL_MS })
      : null;
  }

  get enabled(): boolean {
    return this.rows !== null;
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
    return { hits: this.hits, misses: this.misses, bytes: this.rows?.calculatedSize ?? 0, rows: this.rows?.size ?? 0 };
  }
}
