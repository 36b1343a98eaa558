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
// bound, within TTL_MS; the memory kept is bounded by `maxBytes` (least recently used first out); 0
// keeps nothing.
//
// Memory: each kept row is copied into memory of its own. A small Buffer made the usual way
// (Buffer.from, allocUnsafe, concat) is a slice of a shared pool slab (64 KiB on Node 24) and keeps
// the whole slab alive; rows kept for minutes, a few at a time between the process's other
// allocations, each held a slab of their own (a soak measured 21 MiB of slabs for 2 MiB of rows, and
// growing as the cache filled: docs/reliability.md). A row of its own costs a fixed overhead besides
// its bytes (its ArrayBuffer and view, the allocator's header, the key and the LRU's slots), counted
// in the bound with its bytes, so `maxBytes` is what the process really keeps.
import { LRUCache } from 'lru-cache';

/** How long a kept row may be reused (see above: a bound on xmin reuse, not on staleness). */
export const TTL_MS = 10 * 60_000;

/**
 * Memory a kept row costs besides its bytes and its version text: measured on Node 24, 100 000 rows
 * of 400 bytes in memory of their own cost 907 bytes of RSS each (507 besides the bytes, 209 of them
 * V8 heap); the rest is the key's string and the LRU's slots.
 */
export const ROW_OVERHEAD_BYTES = 640;

/** `row`'s bytes in an ArrayBuffer of exactly their size, shared with nothing (see above). */
function ownCopy(row: Buffer): Buffer {
  if (row.byteOffset === 0 && row.buffer.byteLength === row.length) return row; // already alone
  const own = Buffer.allocUnsafeSlow(row.length);
  row.copy(own);
  return own;
}

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
      ? new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (b, key) => b.length + key.length + ROW_OVERHEAD_BYTES, ttl: TTL_MS })
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

  /** Keeps a copy of `json` (the caller's Buffer may be a slice of a shared slab) and answers it. */
  set(version: string, json: Buffer): Buffer {
    if (this.rows === null) return json;
    const own = ownCopy(json);
    this.rows.set(version, own);
    return own;
  }

  stats(): RowCacheStats {
    return { hits: this.hits, misses: this.misses, bytes: this.rows?.calculatedSize ?? 0, rows: this.rows?.size ?? 0, databaseChanges: this.changes };
  }
}
