// Seq-keyed pagination shared by every list read.
//
// The rule (also in docs/rest.md and the OpenAPI text): a page holds the first `limit` rows in
// list order, EXTENDED by every further row that shares the key (seq) of its last row, so the legs
// of one fill event (or the two epochs a flip touches) are never split across pages. A page may
// therefore hold more than `limit` rows. `nextCursor` is that last key; the next page asks for keys
// strictly below it (`before`) or above it (`since`); it is null when no row lies beyond it.
//
// Each page is read in one of two forms from the same statements: decoded rows (`keyedPage`,
// `uniquePage`, for the gateway's own use), or a JSON body written from the raw row bytes
// (`keyedJsonPage`, `uniqueJsonPage`, what the list routes send; src/db/json/), which select each
// row packed into one text column (src/db/json/packed-row.ts).
import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../database.js';
import { writePackedObject, writePackedPage, writePage, writeRowsPage, type JsonBody } from '../json/json-body.js';
import { intAt, type RawRow, type RowShape } from '../json/row-shape.js';
import type { RowCache } from '../json/row-cache.js';

export interface Page<T> {
  items: T[];
  nextCursor: number | null;
}

export const EMPTY_PAGE: Page<never> = Object.freeze({ items: [], nextCursor: null }) as Page<never>;

/**
 * Rows read past `limit` by the first statement, so that a group of rows sharing the last key
 * (usually the 2–3 legs of one fill event) is completed, and "is there anything beyond" answered,
 * without two more statements.
 */
export const GROUP_SLACK = 8;

type Rows<T> = PendingQuery<T[] & Row[]>;

/** The three queries a keyed page needs, each already carrying the route's filters. */
export interface PageQueries<T> {
  /** Up to `n` rows in list order, starting after the cursor. */
  first(n: number): Rows<T>;
  /** Every row whose key equals `key` (list order within the key). */
  sameKey(key: number): Rows<T>;
  /** Whether any row lies beyond `key` in list order (ordered like the list, so an index answers it at once). */
  beyond(key: number): Promise<boolean>;
}

/**
 * Runs a keyed page: one query unless the rows sharing the limit row's key run past GROUP_SLACK
 * (then two small indexed ones more: the rest of that group, and whether anything lies beyond it).
 */
async function keyed<R>(
  limit: number,
  q: PageQueries<never>,
  fetch: (query: Rows<never>) => Promise<readonly R[]>,
  keyOf: (row: R) => number,
): Promise<Page<R>> {
  const rows = await fetch(q.first(limit + GROUP_SLACK));
  if (rows.length <= limit) return { items: [...rows], nextCursor: null };
  const boundary = keyOf(rows[limit - 1]!);
  let end = limit;
  while (end < rows.length && keyOf(rows[end]!) === boundary) end++;
  if (end < rows.length) return { items: rows.slice(0, end), nextCursor: boundary };
  // Every row after the limit shares its key: a short read is the end of the list, a full one is not.
  if (rows.length < limit + GROUP_SLACK) return { items: [...rows], nextCursor: null };
  const [group, more] = await Promise.all([fetch(q.sameKey(boundary)), q.beyond(boundary)]);
  let start = limit - 1;
  while (start > 0 && keyOf(rows[start - 1]!) === boundary) start--;
  return { items: [...rows.slice(0, start), ...group], nextCursor: more ? boundary : null };
}

async function unique<R>(limit: number, first: (n: number) => Rows<never>, fetch: (query: Rows<never>) => Promise<readonly R[]>, keyOf: (row: R) => number): Promise<Page<R>> {
  const rows = await fetch(first(limit + 1));
  if (rows.length <= limit) return { items: [...rows], nextCursor: null };
  return { items: rows.slice(0, limit), nextCursor: keyOf(rows[limit - 1]!) };
}

const decoded = <T>(query: Rows<never>) => query as unknown as Promise<T[]>;
const raw = (query: Rows<never>) => query.raw() as unknown as Promise<RawRow[]>;

/** A keyed page of decoded rows. */
export function keyedPage<T>(limit: number, keyOf: (row: T) => number, q: PageQueries<T>): Promise<Page<T>> {
  return keyed(limit, q as unknown as PageQueries<never>, decoded<T>, keyOf);
}

/** A page where keys are unique (deposits, withdrawals, events, batches): no grouping needed. */
export function uniquePage<T>(limit: number, keyOf: (row: T) => number, first: (n: number) => Rows<T>): Promise<Page<T>> {
  return unique(limit, first as unknown as (n: number) => Rows<never>, decoded<T>, keyOf);
}

/**
 * What a list statement selects: the shape's columns (`sql(columns)`: decoded rows, or raw ones
 * column by column), or its packed form (`key`, then the row as one text column: packed-row.ts).
 */
export type Select = ReturnType<Queryable['unsafe']> | ReturnType<typeof columnsOf>;
const columnsOf = (sql: Queryable, shape: RowShape) => sql(shape.columns);
const packedOf = (sql: Queryable, shape: RowShape, key: string) => sql.unsafe(shape.packedSelect(key));
const packedKey = (r: RawRow) => intAt(r, 0);

/**
 * The database a statement ran on, as one value (ADR 0116): the server's start time. A version
 * (key, xmin) means one content only within one server's life: a base backup restored in place keeps
 * the system identifier and the timeline but hands out the same transaction ids again with other
 * content, and a failover or another database at the same address is another server; each of them
 * starts a server, so its start time differs. (The system identifier and timeline, read from the
 * control file, cost ~0.1 ms a statement and miss the restore.) An uncorrelated subquery: evaluated
 * once per statement, on the very connection that read the versions (a pool may hold connections
 * to two servers at once). PGlite answers it too.
 */
export const DATABASE_IDENTITY = '(SELECT pg_postmaster_start_time()::text)';

/**
 * How a family's rows are kept by version (row-cache.ts, docs/adr/0104-list-rows-kept-by-version.md):
 * what a page selects instead of its rows (the key, then `table:pk…:xmin` as the version, then the
 * database's identity), and how the rows of missing versions are fetched (by the key: every row
 * sharing it, matched by version; with the identity again as the last column).
 */
export interface RowVersions {
  readonly probeSelect: string;
  readonly fetchStatement: string;
}

/**
 * `pk`: the table's primary key columns, the list key first. Only for a statement reading one
 * table under its own name or one alias at a time (`xmin` is unqualified).
 */
export function rowVersions(table: string, pk: readonly [string, ...string[]], shape: RowShape): RowVersions {
  const version = `concat('${table}', ${pk.map((c) => `':', "${c}"`).join(', ')}, ':', xmin)`;
  return {
    probeSelect: `"${pk[0]}", ${version} AS v, ${DATABASE_IDENTITY} AS db`,
    fetchStatement: `SELECT ${version} AS v, ${shape.packedSelect(pk[0])}, ${DATABASE_IDENTITY} AS db FROM ${table} WHERE "${pk[0]}" = ANY($1::bigint[])`,
  };
}

/** Rows kept by version, for the JSON page reads: absent (or a cache of size 0) reads every row. */
export interface KeptRows {
  cache: RowCache;
  versions: RowVersions;
}

/**
 * A page's body from its probe (`[key, version]` rows, in page order): kept rows as they are, the
 * missing ones fetched by key and kept. null when a probed version is no longer in the table (the
 * row changed between the two statements) or a fetched row does not split into its columns: the
 * caller reads the page whole, as without a cache.
 */
async function fromVersions(sql: Queryable, shape: RowShape, kept: KeptRows, page: Page<RawRow>): Promise<JsonBody | null> {
  const { cache } = kept;
  const items = page.items;
  if (items.length === 0) return writeRowsPage([], page.nextCursor);
  // Kept rows are of one database: another one (restored, failed over, replaced) empties the cache
  // before anything is served; a page whose statements ran on two databases is read whole.
  const db = items[0]![2]?.toString('latin1') ?? null;
  if (db === null || !items.every((r) => r[2]?.toString('latin1') === db)) return null;
  cache.bind(db);
  const rows: Buffer[] = new Array<Buffer>(items.length);
  let missing: Map<string, number> | null = null;
  for (let i = 0; i < items.length; i++) {
    const version = items[i]![1]!.toString('latin1');
    const row = cache.get(version);
    if (row !== undefined) rows[i] = row;
    else (missing ??= new Map()).set(version, i);
  }
  if (missing !== null) {
    const keys = new Set<number>();
    for (const i of missing.values()) keys.add(intAt(items[i]!, 0));
    const fetched = (await sql.unsafe(kept.versions.fetchStatement, [`{${[...keys].join(',')}}`], { prepare: true }).raw()) as unknown as RawRow[];
    for (const r of fetched) {
      if (r[3]?.toString('latin1') !== db) return null; // fetched from another database than the page's
      const version = r[0]!.toString('latin1');
      const i = missing.get(version);
      if (i === undefined) continue; // a row of the same key outside the page (another party's leg)
      const json = writePackedObject(shape, r[2]!);
      if (json === null) return null;
      cache.set(version, json);
      rows[i] = json;
      missing.delete(version);
    }
    if (missing.size > 0) return null;
  }
  return writeRowsPage(rows, page.nextCursor);
}

/**
 * A keyed page written as its JSON body; `key` is the shape's key column. With `kept`, the page's
 * keys and row versions are read first and only rows not already kept are fetched; otherwise (or
 * when that cannot be done exactly) it is read packed (one column a row); a page with a row that
 * does not split into its columns (a text value holding a marker byte) is read again column by column.
 */
export async function keyedJsonPage<T>(
  sql: Queryable,
  limit: number,
  shape: RowShape,
  key: string,
  queries: (select: Select) => PageQueries<T>,
  kept?: KeptRows,
): Promise<JsonBody> {
  if (kept?.cache.enabled) {
    const probe = await keyed(limit, queries(sql.unsafe(kept.versions.probeSelect)) as unknown as PageQueries<never>, raw, packedKey);
    const body = await fromVersions(sql, shape, kept, probe);
    if (body !== null) return body;
  }
  const packed = await keyed(limit, queries(packedOf(sql, shape, key)) as unknown as PageQueries<never>, raw, packedKey);
  const body = writePackedPage(shape, packed.items, packed.nextCursor);
  if (body !== null) return body;
  const at = shape.indexOf(key);
  const page = await keyed(limit, queries(columnsOf(sql, shape)) as unknown as PageQueries<never>, raw, (r) => intAt(r, at));
  return writePage(shape, page.items, page.nextCursor);
}

/** A unique-key page written as its JSON body (kept rows, packed, with the same fallbacks as keyedJsonPage). */
export async function uniqueJsonPage<T>(
  sql: Queryable,
  limit: number,
  shape: RowShape,
  key: string,
  first: (select: Select) => (n: number) => Rows<T>,
  kept?: KeptRows,
): Promise<JsonBody> {
  if (kept?.cache.enabled) {
    const probe = await unique(limit, first(sql.unsafe(kept.versions.probeSelect)) as unknown as (n: number) => Rows<never>, raw, packedKey);
    const body = await fromVersions(sql, shape, kept, probe);
    if (body !== null) return body;
  }
  const packed = await unique(limit, first(packedOf(sql, shape, key)) as unknown as (n: number) => Rows<never>, raw, packedKey);
  const body = writePackedPage(shape, packed.items, packed.nextCursor);
  if (body !== null) return body;
  const at = shape.indexOf(key);
  const page = await unique(limit, first(columnsOf(sql, shape)) as unknown as (n: number) => Rows<never>, raw, (r) => intAt(r, at));
  return writePage(shape, page.items, page.nextCursor);
}

export type { Queryable };
