// Seq-keyed pagination shared by every list read.
//
// The rule (also in docs/rest.md and the OpenAPI text): a page holds the first `limit` rows in
// list order, EXTENDED by every further row that shares the key (seq) of its last row, so the legs
// of one fill event (or the two epochs a flip touches) are never split across pages. A page may
// therefore hold more than `limit` rows. `nextCursor` is that last key; the next page asks for keys
// strictly below it (`before`) or above it (`since`); it is null when no row lies beyond it.
import type { Queryable } from '../database.js';

export interface Page<T> {
  items: T[];
  nextCursor: number | null;
}

export const EMPTY_PAGE: Page<never> = Object.freeze({ items: [], nextCursor: null }) as Page<never>;

/** The three queries a keyed page needs, each already carrying the route's filters. */
export interface PageQueries<T> {
  /** Up to `n` rows in list order, starting after the cursor. */
  first(n: number): Promise<T[]>;
  /** Every row whose key equals `key` (list order within the key). */
  sameKey(key: number): Promise<T[]>;
  /** Whether any row lies beyond `key` in list order (ordered like the list, so an index answers it at once). */
  beyond(key: number): Promise<boolean>;
}

/**
 * Runs a keyed page: one query in the common case (the row after the limit has another key), three
 * small indexed ones when the limit falls inside a group of rows sharing one key.
 */
export async function keyedPage<T>(limit: number, keyOf: (row: T) => number, q: PageQueries<T>): Promise<Page<T>> {
  const rows = await q.first(limit + 1);
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const boundary = keyOf(rows[limit - 1]!);
  if (keyOf(rows[limit]!) !== boundary) return { items: rows.slice(0, limit), nextCursor: boundary };
  const [group, more] = await Promise.all([q.sameKey(boundary), q.beyond(boundary)]);
  const head = rows.filter((r) => keyOf(r) !== boundary);
  return { items: [...head, ...group], nextCursor: more ? boundary : null };
}

/** A page where keys are unique (deposits, withdrawals, events, batches): no grouping needed. */
export async function uniquePage<T>(limit: number, keyOf: (row: T) => number, first: (n: number) => Promise<T[]>): Promise<Page<T>> {
  const rows = await first(limit + 1);
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: keyOf(items[limit - 1]!) };
}

export type { Queryable };
