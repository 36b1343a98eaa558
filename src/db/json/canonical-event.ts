// Events read raw (postgres.js `.raw()`: each column's bytes) written as the canonical JSON of their
// envelopes, the text each one's leaf hashes (docs/verification.md, ADR 0360): no row objects, no
// parsed payloads, no JSON.stringify on the common path. The members in canonical order are
// kind, market?, party?, payload, seq, ts (a NULL market or party left out, as on the stream).
import { canonicalJson } from '../../../packages/client/src/verify/scheme.js';
import { ByteWriter } from './byte-writer.js';
import { writeCanonicalJsonb } from './canonical.js';
import type { RawRow } from './row-shape.js';
import { writeTime } from './values.js';

/** The columns an event is read with, in this order (`SELECT seq, kind, ts, market, party, payload`). */
export const EVENT_TEXT_COLUMNS = ['seq', 'kind', 'ts', 'market', 'party', 'payload'] as const;
const SEQ = 0;
const KIND = 1;
const TS = 2;
const MARKET = 3;
const PARTY = 4;
const PAYLOAD = 5;

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const K_KIND = ascii('{"kind":');
const K_MARKET = ascii(',"market":');
const K_PARTY = ascii(',"party":');
const K_PAYLOAD = ascii(',"payload":');
const K_SEQ = ascii(',"seq":');
const K_TS = ascii(',"ts":');

export interface CanonicalEvents {
  /** Each event's canonical JSON, in the rows' order. */
  texts: Buffer[];
  /** Each event's leaf input, 0x00 ‖ its canonical JSON (the same bytes, one before): sha256 of it is the leaf. */
  leafInputs: Buffer[];
}

/**
 * The canonical JSON of each event row (columns EVENT_TEXT_COLUMNS), all in one buffer. A payload
 * the byte writer does not know to be exact (canonical.ts) is parsed and written by canonicalJson,
 * as the client writes it: the same text either way.
 */
export function canonicalEvents(rows: readonly RawRow[]): CanonicalEvents {
  let size = 0;
  for (const row of rows) size += 160 + (row[PAYLOAD]?.length ?? 0) + (row[PARTY]?.length ?? 0) + (row[KIND]?.length ?? 0);
  const w = new ByteWriter(Math.max(1024, size));
  // [start, end) of each text in the writer; the byte before each start is 0x00. Views are made
  // at the end: the writer's buffer may be replaced while it grows.
  const spans = new Array<number>(2 * rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    w.byte(0);
    spans[2 * i] = w.length;
    writeEvent(w, row);
    spans[2 * i + 1] = w.length;
  }
  const bytes = w.bytes();
  const texts = new Array<Buffer>(rows.length);
  const leafInputs = new Array<Buffer>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const start = spans[2 * i]!;
    const end = spans[2 * i + 1]!;
    texts[i] = bytes.subarray(start, end);
    leafInputs[i] = bytes.subarray(start - 1, end);
  }
  return { texts, leafInputs };
}

function column(row: RawRow, i: number): Buffer {
  const v = row[i];
  if (!v) throw new Error(`event column ${EVENT_TEXT_COLUMNS[i]} is NULL`);
  return v as Buffer;
}

function writeEvent(w: ByteWriter, row: RawRow): void {
  w.raw(K_KIND);
  w.text(column(row, KIND));
  const market = row[MARKET];
  if (market) {
    w.raw(K_MARKET);
    w.text(market);
  }
  const party = row[PARTY];
  if (party) {
    w.raw(K_PARTY);
    w.text(party);
  }
  w.raw(K_PAYLOAD);
  const payload = column(row, PAYLOAD);
  if (!writeCanonicalJsonb(w, payload)) w.string(canonicalJson(JSON.parse(payload.toString('utf8'))));
  w.raw(K_SEQ);
  w.raw(column(row, SEQ));
  w.raw(K_TS);
  writeTime(w, column(row, TS));
  w.byte(0x7d);
}
