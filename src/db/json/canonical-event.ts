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

/**
 * The canonical JSON of a list of events, laid out as 0x00 ‖ text₁ ‖ 0x00 ‖ text₂ ‖ …: each text
 * with the byte before it is its leaf's input (sha256 of it is the leaf), hashed in place; then the
 * 0x00 between texts become commas and the whole is the members of a JSON array (`joined`).
 */
export class CanonicalEvents {
  private isJoined = false;

  /** `ends[i]`: the end of text i in `bytes` (text i + 1's 0x00 is there). */
  constructor(
    private readonly bytes: Buffer,
    private readonly ends: readonly number[],
  ) {}

  get count(): number {
    return this.ends.length;
  }

  /** 0x00 ‖ the canonical JSON of event i: the leaf's input. Not after `joined`. */
  leafInput(i: number): Buffer {
    if (this.isJoined) throw new Error('the leaf inputs are gone once the texts are joined');
    return this.bytes.subarray(i === 0 ? 0 : this.ends[i - 1]!, this.ends[i]!);
  }

  /** The canonical JSON of event i. */
  text(i: number): Buffer {
    return this.bytes.subarray((i === 0 ? 0 : this.ends[i - 1]!) + 1, this.ends[i]!);
  }

  /** The texts separated by commas (the bytes between them turned from 0x00 into commas, once): the members of the events array. */
  joined(): Buffer {
    if (!this.isJoined) {
      for (let i = 0; i + 1 < this.ends.length; i++) this.bytes[this.ends[i]!] = 0x2c;
      this.isJoined = true;
    }
    return this.count === 0 ? this.bytes.subarray(0, 0) : this.bytes.subarray(1, this.ends.at(-1)!);
  }
}

/**
 * The canonical JSON of each event row (columns EVENT_TEXT_COLUMNS), all in one buffer. A payload
 * the byte writer does not know to be exact (canonical.ts) is parsed and written by canonicalJson,
 * as the client writes it: the same text either way.
 */
export function canonicalEvents(rows: readonly RawRow[]): CanonicalEvents {
  let size = 0;
  for (const row of rows) size += 160 + (row[PAYLOAD]?.length ?? 0) + (row[PARTY]?.length ?? 0) + (row[KIND]?.length ?? 0) + (row[MARKET]?.length ?? 0);
  const w = new ByteWriter(Math.max(64, size));
  const ends = new Array<number>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    w.byte(0);
    writeEvent(w, rows[i]!);
    ends[i] = w.length;
  }
  return new CanonicalEvents(w.bytes(), ends);
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
