// Canonical JSON (docs/verification.md: members sorted by key, no whitespace, strings as
// JSON.stringify writes them, integers in their shortest form) written straight from the text
// PostgreSQL prints for a jsonb value, without parsing it into objects (ADR 0360). What the proof
// routes write for each event and hash for its leaf; the client recomputes every hash itself.
//
// PostgreSQL prints jsonb with one space after `:` and `,`, strings escaped as JSON.stringify
// escapes them, and an object's members shorter keys first (then by bytes), never duplicated.
// So the canonical text is that text with the spaces outside strings dropped and each object's
// members put in key order. Byte order of two keys is their UTF-16 order (the canonical order) when
// both are ASCII without escapes; anything else this writer does not know to be exact (a key with
// an escape or a byte above 0x7f, a digit-only key, a number JS would print otherwise: a fraction,
// an exponent, a leading zero, -0, more than 15 digits) makes it return false, and the caller takes
// the JS path instead (JSON.parse, then canonicalJson): the same text, slower.
import type { ByteWriter } from './byte-writer.js';

const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const D0 = 0x30;
const D9 = 0x39;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isDigit = (b: number): boolean => b >= D0 && b <= D9;

/** Thrown inside the writer when the text takes the JS path; never escapes writeCanonicalJsonb. */
const NOT_EXACT = new Error('not exact');

/**
 * Writes the canonical JSON of the jsonb text `src[start, end)` (as PostgreSQL prints it) and
 * returns true; false, with the writer rewound to where it was, when the value needs the JS path.
 */
export function writeCanonicalJsonb(w: ByteWriter, src: Uint8Array, start = 0, end = src.length): boolean {
  const mark = w.length;
  top = 0;
  try {
    const at = value(w, src, skipSpaces(src, start, end), end);
    if (skipSpaces(src, at, end) !== end) throw NOT_EXACT;
    return true;
  } catch (err) {
    if (err !== NOT_EXACT) throw err;
    w.rewind(mark);
    return false;
  }
}

function skipSpaces(src: Uint8Array, i: number, end: number): number {
  while (i < end && src[i] === SPACE) i++;
  return i;
}

/** The end of the string whose opening quote is at `i` (just past its closing quote). */
function stringEnd(src: Uint8Array, i: number, end: number): number {
  i++;
  while (i < end) {
    const c = src[i++]!;
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++;
  }
  throw NOT_EXACT;
}

/** Copies the string whose opening quote is at `i` as it is, in the pass that finds its end; returns the index just past it. */
function copyString(w: ByteWriter, src: Uint8Array, i: number, end: number): number {
  const buf = w.reserve(end - i);
  let at = w.length;
  buf[at++] = src[i++]!;
  while (i < end) {
    const c = src[i++]!;
    buf[at++] = c;
    if (c === QUOTE) {
      w.moveTo(at);
      return i;
    }
    if (c === BACKSLASH) {
      if (i >= end) break;
      buf[at++] = src[i++]!;
    }
  }
  throw NOT_EXACT;
}

/** Writes the value at `i` (no leading space), returns the index just past it. */
function value(w: ByteWriter, src: Uint8Array, i: number, end: number): number {
  if (i >= end) throw NOT_EXACT;
  const b = src[i]!;
  if (b === QUOTE) return copyString(w, src, i, end);
  if (b === OPEN_OBJECT) return object(w, src, i, end);
  if (b === OPEN_ARRAY) return array(w, src, i, end);
  if (b === MINUS || isDigit(b)) return number(w, src, i, end);
  // true, false, null
  const word = b === 0x74 ? 4 : b === 0x66 ? 5 : b === 0x6e ? 4 : 0;
  if (word === 0 || i + word > end) throw NOT_EXACT;
  w.rawRange(src, i, i + word);
  return i + word;
}

/** Only integers JS prints back unchanged: no fraction or exponent, no leading zero, not -0, at most 15 digits. */
function number(w: ByteWriter, src: Uint8Array, i: number, end: number): number {
  const start = i;
  if (src[i] === MINUS) i++;
  const first = i;
  while (i < end && isDigit(src[i]!)) i++;
  const digits = i - first;
  const next = i < end ? src[i]! : SPACE;
  if (digits === 0 || digits > 15 || next === 0x2e || next === 0x65 || next === 0x45) throw NOT_EXACT;
  if (src[first] === D0 && (digits > 1 || first > start)) throw NOT_EXACT;
  w.rawRange(src, start, i);
  return i;
}

function array(w: ByteWriter, src: Uint8Array, i: number, end: number): number {
  w.byte(OPEN_ARRAY);
  i = skipSpaces(src, i + 1, end);
  if (src[i] === CLOSE_ARRAY) {
    w.byte(CLOSE_ARRAY);
    return i + 1;
  }
  for (let first = true; ; first = false) {
    if (!first) w.byte(COMMA);
    i = skipSpaces(src, value(w, src, i, end), end);
    const c = src[i];
    if (c === CLOSE_ARRAY) {
      w.byte(CLOSE_ARRAY);
      return i + 1;
    }
    if (c !== COMMA) throw NOT_EXACT;
    i = skipSpaces(src, i + 1, end);
  }
}

/** A key PostgreSQL printed whose byte order is its UTF-16 order, and that JS keeps in place: ASCII, no escape, not digits only. */
function plainKey(src: Uint8Array, start: number, end: number): void {
  let digits = true;
  for (let k = start + 1; k < end - 1; k++) {
    const c = src[k]!;
    if (c === BACKSLASH || c > 0x7f) throw NOT_EXACT;
    if (!isDigit(c)) digits = false;
  }
  if (digits && end - start > 2) throw NOT_EXACT;
}

/** Byte order of two keys (their spans include the quotes): the bytes between the quotes, then a prefix first. */
function compareKeys(src: Uint8Array, a0: number, a1: number, b0: number, b1: number): number {
  const n = Math.min(a1 - a0, b1 - b0) - 1;
  for (let k = 1; k < n; k++) {
    const d = src[a0 + k]! - src[b0 + k]!;
    if (d !== 0) return d;
  }
  return a1 - a0 - (b1 - b0);
}

/**
 * Per member of the objects being written: its key's start and end in src, the member's start and
 * end in the writer. A stack shared by the nested objects: an object's members sit above those its
 * parent has written so far, and are dropped when it ends (`top` back to where it began).
 */
let members = new Int32Array(4 * 256);
let top = 0;
/** The members of the object being reordered, by key (reorder does not nest). */
let order = new Int32Array(256);

function push(a: number, b: number, c: number, d: number): void {
  if (top + 4 > members.length) {
    const grown = new Int32Array(2 * members.length);
    grown.set(members);
    members = grown;
  }
  members[top] = a;
  members[top + 1] = b;
  members[top + 2] = c;
  members[top + 3] = d;
  top += 4;
}

/**
 * Writes the members in PostgreSQL's order, each value canonical already, noting where each member
 * (key, colon, value) starts and ends in the writer; when the keys were not in byte order, copies
 * the members out and writes them again in that order. One pass over the text; a nested object is
 * copied once more per unsorted object above it.
 */
function object(w: ByteWriter, src: Uint8Array, i: number, end: number): number {
  w.byte(OPEN_OBJECT);
  i = skipSpaces(src, i + 1, end);
  if (src[i] === CLOSE_OBJECT) {
    w.byte(CLOSE_OBJECT);
    return i + 1;
  }
  const first = w.length;
  const base = top;
  let sorted = true;
  for (;;) {
    if (src[i] !== QUOTE) throw NOT_EXACT;
    const keyStart = i;
    const keyEnd = stringEnd(src, i, end);
    plainKey(src, keyStart, keyEnd);
    if (top > base) {
      if (sorted && compareKeys(src, members[top - 4]!, members[top - 3]!, keyStart, keyEnd) > 0) sorted = false;
      w.byte(COMMA);
    }
    const at = w.length;
    w.rawRange(src, keyStart, keyEnd);
    w.byte(COLON);
    const colon = skipSpaces(src, keyEnd, end);
    if (src[colon] !== COLON) throw NOT_EXACT;
    i = skipSpaces(src, value(w, src, skipSpaces(src, colon + 1, end), end), end);
    push(keyStart, keyEnd, at, w.length);
    const c = src[i];
    if (c === CLOSE_OBJECT) break;
    if (c !== COMMA) throw NOT_EXACT;
    i = skipSpaces(src, i + 1, end);
  }
  if (!sorted) reorder(w, src, first, base);
  top = base;
  w.byte(CLOSE_OBJECT);
  return i + 1;
}

/** Scratch copy of an object's members while they are written again in order (reorder does not nest). */
let scratch = Buffer.allocUnsafe(64 * 1024);

/** Rewrites the members written from `first` on (those on the stack from `base`) in the byte order of their keys. */
function reorder(w: ByteWriter, src: Uint8Array, first: number, base: number): void {
  const n = (top - base) / 4;
  const size = w.length - first;
  if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, 2 * scratch.length));
  w.reserve(0).copy(scratch, 0, first, first + size);
  if (order.length < n) order = new Int32Array(2 * n);
  // Insertion sort of the members' stack offsets: a few members, many of them in place already.
  for (let k = 0; k < n; k++) {
    const m = base + 4 * k;
    const ks = members[m]!;
    const ke = members[m + 1]!;
    let j = k;
    while (j > 0) {
      const o = order[j - 1]!;
      if (compareKeys(src, members[o]!, members[o + 1]!, ks, ke) < 0) break;
      order[j] = o;
      j--;
    }
    order[j] = m;
  }
  w.rewind(first);
  for (let k = 0; k < n; k++) {
    const m = order[k]!;
    if (k > 0) w.byte(COMMA);
    w.copy(scratch, members[m + 2]! - first, members[m + 3]! - first);
  }
}
