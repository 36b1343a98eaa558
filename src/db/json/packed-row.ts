// A list row that PostgreSQL sends as ONE text column: every column's text after a marker byte, in
// select order (`concat(E'\x1f', seq, E'\x1f', size, coalesce(E'\x1f' || party, E'\x1e'), …)`).
// The driver then makes one Buffer view per row instead of one per column (about 1 700 for a page
// of fills: the garbage they made was a quarter of a read's CPU, docs/adr/0102-packed-list-rows.md),
// and the writer walks the row's bytes once. PostgreSQL prints each value with the same output
// function as for a column of its own, so the values are the bytes the per-column path reads.
//
// Markers: 0x1f before a value, 0x1e for a NULL text value (a NULL of any other kind is an empty
// value: no integer, decimal, boolean, time or jsonb prints as ''). jsonb prints control characters
// escaped, so only a text column can hold a marker byte; then the row splits into more values than
// it has columns, which the walk detects exactly (each column takes one value; the row must end
// with the last one), and the page is read again column by column.
import type { ByteWriter } from './byte-writer.js';
import { writeJsonb, writeTime } from './values.js';

export const FIELD = 0x1f;
export const NULL_FIELD = 0x1e;

/** Column kinds as row-shape.ts numbers them. */
export const TEXT = 0;
const INT = 1;
const DECIMAL = 2;
const BOOL = 3;
const TIME = 4;

const QUOTE = 0x22;
const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const NULL = ascii('null');
const TRUE = ascii('true');
const FALSE = ascii('false');

export interface PackedLayout {
  readonly kinds: Int8Array;
  readonly omit: readonly boolean[];
  readonly firstKey: readonly Uint8Array[];
  readonly nextKey: readonly Uint8Array[];
}

/** The select list of a packed read: the key column (for paging), then the packed row. */
export function packedSelect(columns: readonly string[], kinds: Int8Array, key: string): string {
  const parts = columns.map((c, i) => (kinds[i] === TEXT ? `coalesce(E'\\x1f' || "${c}", E'\\x1e')` : `E'\\x1f', "${c}"`));
  return `"${key}", concat(${parts.join(', ')}) AS packed`;
}

const isMark = (b: number | undefined): boolean => b === FIELD || b === NULL_FIELD;

function nextMark(v: Uint8Array, i: number, n: number): number {
  while (i < n && !isMark(v[i])) i++;
  return i;
}

/**
 * Writes one packed row as its JSON object; false (the writer's position then undefined: the caller
 * rewinds) when the row does not split into exactly its columns. May throw on such a row too (a
 * misplaced time or jsonb value): the caller treats that as false.
 */
export function writePackedRow(w: ByteWriter, v: Uint8Array, layout: PackedLayout): boolean {
  const { kinds, omit, firstKey, nextKey } = layout;
  const n = v.length;
  const columns = kinds.length;
  let i = 0;
  let first = true;
  for (let c = 0; c < columns; c++) {
    const mark = v[i];
    if (!isMark(mark)) return false;
    i++;
    const kind = kinds[c]!;
    if (mark === NULL_FIELD || (kind !== TEXT && (i === n || isMark(v[i])))) {
      if (omit[c]) continue;
      w.raw(first ? firstKey[c]! : nextKey[c]!);
      first = false;
      w.raw(NULL);
      continue;
    }
    w.raw(first ? firstKey[c]! : nextKey[c]!);
    first = false;
    switch (kind) {
      case TEXT: {
        const start = w.length;
        w.byte(QUOTE);
        const stop = w.run(v, i, n);
        if (stop === n || isMark(v[stop])) {
          w.byte(QUOTE);
          i = stop;
        } else {
          // Rare: a byte to escape; JSON.stringify escapes it (what the object path's serializer did).
          const end = nextMark(v, stop, n);
          w.rewind(start);
          w.string(JSON.stringify(Buffer.from(v.buffer, v.byteOffset + i, end - i).toString('utf8')));
          i = end;
        }
        break;
      }
      case INT:
        i = w.run(v, i, n);
        break;
      case DECIMAL:
        w.byte(QUOTE);
        i = w.run(v, i, n);
        w.byte(QUOTE);
        break;
      case BOOL:
        w.raw(v[i] === 0x74 ? TRUE : FALSE);
        i++;
        break;
      case TIME: {
        const end = nextMark(v, i, n);
        writeTime(w, v, i, end);
        i = end;
        break;
      }
      default:
        i = writeJsonb(w, v, i, n); // stops at the marker after the value

    }
  }
  w.byte(first ? 0x7b : 0x7d);
  if (first) w.byte(0x7d);
  return i === n;
}
