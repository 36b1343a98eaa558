// How one row of a list read is written as JSON from its raw column bytes: the columns in select
// order, each with its wire kind. The keys are the columns in camelCase (postgres.toCamel, the
// transform the object path uses), in select order, which is the order of the response schemas.
import postgres from 'postgres';
import { ByteWriter } from './byte-writer.js';
import { writeJsonb, writeTime } from './values.js';
import { packedSelect, writePackedRow, type PackedLayout } from './packed-row.js';

export type ColumnKind = 'text' | 'int' | 'decimal' | 'bool' | 'time' | 'json';

/** A row as postgres.js `.raw()` gives it: each column's bytes, null for SQL NULL. */
export type RawRow = ReadonlyArray<Buffer | null>;

export interface RowShape {
  /** Column names, in select order (for `sql(columns)`). */
  readonly columns: string[];
  /** Index of a column, for reading a row's key. */
  indexOf(column: string): number;
  write(w: ByteWriter, row: RawRow): void;
  /** The select list of the packed form (packed-row.ts): `key`, then the row as one text column. */
  packedSelect(key: string): string;
  /** Writes a packed row (the bytes of its one column); false when it is not exactly this shape's columns. */
  writePacked(w: ByteWriter, packed: Uint8Array): boolean;
}

const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const NULL = ascii('null');
const TRUE = ascii('true');
const FALSE = ascii('false');
const KIND: Record<ColumnKind, number> = { text: 0, int: 1, decimal: 2, bool: 3, time: 4, json: 5 };

/**
 * `spec`: [column, kind] in select order. `omitNull`: columns left out of the object when NULL
 * (the event envelope's market and party) instead of written as null.
 */
export function rowShape(spec: ReadonlyArray<readonly [string, ColumnKind]>, omitNull: readonly string[] = []): RowShape {
  const columns = spec.map(([c]) => c);
  const kinds = Int8Array.from(spec.map(([, k]) => KIND[k]));
  const omit = spec.map(([c]) => omitNull.includes(c));
  const firstKey = columns.map((c) => ascii(`{${JSON.stringify(postgres.toCamel(c))}:`));
  const nextKey = columns.map((c) => ascii(`,${JSON.stringify(postgres.toCamel(c))}:`));
  const n = columns.length;
  const layout: PackedLayout = { kinds, omit, firstKey, nextKey };
  const selects = new Map<string, string>();
  return {
    columns,
    packedSelect(key) {
      let select = selects.get(key);
      if (select === undefined) selects.set(key, (select = packedSelect(columns, kinds, key)));
      return select;
    },
    writePacked: (w, packed) => writePackedRow(w, packed, layout),
    indexOf(column) {
      const i = columns.indexOf(column);
      if (i < 0) throw new Error(`no column ${column} in this row shape`);
      return i;
    },
    write(w, row) {
      let first = true;
      for (let i = 0; i < n; i++) {
        const v = row[i]!;
        if (v === null && omit[i]) continue;
        w.raw(first ? firstKey[i]! : nextKey[i]!);
        first = false;
        if (v === null) {
          w.raw(NULL);
          continue;
        }
        switch (kinds[i]) {
          case 0: w.text(v); break;
          case 1: w.raw(v); break;
          case 2: w.quoted(v); break;
          case 3: w.raw(v[0] === 0x74 ? TRUE : FALSE); break;
          case 4: writeTime(w, v); break;
          default: writeJsonb(w, v);
        }
      }
      w.byte(first ? 0x7b : 0x7d);
      if (first) w.byte(0x7d);
    },
  };
}

/** An integer column's value (a seq or other key), read from its digits without making a string. */
export function intAt(row: RawRow, index: number): number {
  const v = row[index];
  if (!v) throw new Error(`key column ${index} is NULL`);
  let x = 0;
  let i = 0;
  const negative = v[0] === 0x2d;
  if (negative) i = 1;
  for (; i < v.length; i++) x = x * 10 + (v[i]! - 0x30);
  return negative ? -x : x;
}
