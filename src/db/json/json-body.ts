// A response body already written as JSON (a list page built from raw rows). The HTTP edge sends
// its bytes as they are, with the JSON content type; nothing serialises it again.
import { ByteWriter } from './byte-writer.js';
import type { RawRow, RowShape } from './row-shape.js';

export class JsonBody {
  constructor(readonly bytes: Buffer) {}

  static of(value: unknown): JsonBody {
    return new JsonBody(Buffer.from(JSON.stringify(value), 'utf8'));
  }
}

/** `{"items":[],"nextCursor":null}`: a list without a database, or past its end. */
export const EMPTY_JSON_PAGE = JsonBody.of({ items: [], nextCursor: null });

const OPEN = Buffer.from('{"items":[', 'latin1');
const CURSOR = Buffer.from('],"nextCursor":', 'latin1');
const NULL = Buffer.from('null}', 'latin1');

// One writer for every page: a page is written synchronously, then copied out at its exact size.
const writer = new ByteWriter();

/** `{"items":[…],"nextCursor":…}` in the key order of the List schema. */
export function writePage(shape: RowShape, rows: readonly RawRow[], nextCursor: number | null): JsonBody {
  const w = writer;
  w.reset();
  w.raw(OPEN);
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) w.byte(0x2c);
    shape.write(w, rows[i]!);
  }
  w.raw(CURSOR);
  if (nextCursor === null) w.raw(NULL);
  else w.string(`${nextCursor}}`);
  return new JsonBody(Buffer.from(w.bytes()));
}

/**
 * The same body from packed rows (`[key, packed]`, packed-row.ts); null when a row does not split
 * into its shape's columns (a text value holding a marker byte): the caller reads the page again
 * column by column.
 */
export function writePackedPage(shape: RowShape, rows: readonly RawRow[], nextCursor: number | null): JsonBody | null {
  const w = writer;
  w.reset();
  w.raw(OPEN);
  try {
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) w.byte(0x2c);
      if (!shape.writePacked(w, rows[i]![1]!)) return null;
    }
  } catch {
    return null;
  }
  w.raw(CURSOR);
  if (nextCursor === null) w.raw(NULL);
  else w.string(`${nextCursor}}`);
  return new JsonBody(Buffer.from(w.bytes()));
}

/** The same body from rows already written as JSON objects (row-cache.ts). */
export function writeRowsPage(rows: readonly Uint8Array[], nextCursor: number | null): JsonBody {
  const w = writer;
  w.reset();
  w.raw(OPEN);
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) w.byte(0x2c);
    w.raw(rows[i]!);
  }
  w.raw(CURSOR);
  if (nextCursor === null) w.raw(NULL);
  else w.string(`${nextCursor}}`);
  return new JsonBody(Buffer.from(w.bytes()));
}

const rowWriter = new ByteWriter(4 * 1024);

/** One packed row (its one column's bytes) written as its JSON object; null when it does not split into the shape's columns. */
export function writePackedObject(shape: RowShape, packed: Uint8Array): Buffer | null {
  const w = rowWriter;
  w.reset();
  try {
    if (!shape.writePacked(w, packed)) return null;
  } catch {
    return null;
  }
  return Buffer.from(w.bytes());
}
