// The two values whose database text differs from their wire form: times and jsonb. Each has a
// fast path for the form PostgreSQL prints (the gateway's connections run with TimeZone UTC and ISO
// dates) and falls back to exactly what the object path did for anything else.
import type { ByteWriter } from './byte-writer.js';

const D0 = 0x30;
const D9 = 0x39;
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;
const PLUS = 0x2b;

// Scratch space of a time, reused by every call (writes are synchronous; the writer copies out of it).
const TIME = new Uint8Array(26);

const isDigit = (b: number): boolean => b >= D0 && b <= D9;

/**
 * A timestamptz (the bytes `src[start, end)`) as `new Date(text).toISOString()` prints it: `YYYY-MM-DDTHH:MM:SS.mmmZ`, the
 * fraction truncated to milliseconds (as V8 parses it). Fast path: `YYYY-MM-DD HH:MM:SS[.f…]+00`.
 */
export function writeTime(w: ByteWriter, src: Uint8Array, start = 0, end = src.length): void {
  const s = start;
  const n = end - s;
  let i = 19;
  let fast = n >= 22 && src[s + 4] === MINUS && src[s + 7] === MINUS && src[s + 10] === SPACE && src[s + 13] === COLON && src[s + 16] === COLON;
  let fracEnd = i;
  if (fast && src[s + i] === DOT) {
    i++;
    while (i < n && isDigit(src[s + i]!)) i++;
    fracEnd = i;
  }
  fast = fast && i + 3 === n && src[s + i] === PLUS && src[s + i + 1] === D0 && src[s + i + 2] === D0;
  if (!fast) {
    w.string(JSON.stringify(new Date(Buffer.from(src.buffer, src.byteOffset + s, n).toString('latin1')).toISOString()));
    return;
  }
  const out = TIME;
  out[0] = QUOTE;
  for (let k = 0; k < 10; k++) out[1 + k] = src[s + k]!;
  out[11] = 0x54; // T
  for (let k = 11; k < 19; k++) out[1 + k] = src[s + k]!;
  out[20] = DOT;
  for (let k = 0; k < 3; k++) {
    const at = 20 + k;
    out[21 + k] = at < fracEnd ? src[s + at]! : D0;
  }
  out[24] = 0x5a; // Z
  out[25] = QUOTE;
  w.raw(out);
}

/**
 * A jsonb value (the bytes `src[start, end)`) as JSON.stringify(JSON.parse(text)) prints it. PostgreSQL prints jsonb with one space
 * after `:` and `,` and strings escaped as JSON.stringify escapes them, so dropping the spaces
 * outside strings is enough, unless a JS round trip would change something: a number not in its
 * shortest JS form (`1.50`, `1e3`, more than 15 digits) or an integer-like key (JS objects put those
 * first). Those values take the round trip itself.
 */
export function writeJsonb(w: ByteWriter, src: Uint8Array, start = 0, end = src.length): number {
  const stop = compactJsonb(w, src, start, end);
  if (stop >= 0) return stop;
  let e = start;
  while (e < end && src[e]! >= SPACE) e++;
  w.string(JSON.stringify(JSON.parse(Buffer.from(src.buffer, src.byteOffset + start, e - start).toString('utf8'))));
  return e;
}

/**
 * Writes straight into the writer's buffer (the compact text is never longer than the source).
 * Stops at `n` or at a control byte outside a string (jsonb prints none: the end of a packed value,
 * packed-row.ts) and returns where; -1 when the value needs the JS round trip.
 */
function compactJsonb(w: ByteWriter, src: Uint8Array, from: number, n: number): number {
  const out = w.reserve(n - from);
  let o = w.length;
  let i = from;
  while (i < n) {
    const b = src[i]!;
    if (b === SPACE) {
      i++;
    } else if (b === QUOTE) {
      const start = i;
      out[o++] = b;
      i++;
      while (i < n) {
        const c = src[i++]!;
        out[o++] = c;
        if (c === QUOTE) break;
        if (c === BACKSLASH) out[o++] = src[i++]!;
      }
      // A key (a string followed by ':') made of digits is reordered by JS objects.
      if (src[i] === COLON && i - start > 2 && digitsOnly(src, start + 1, i - 1)) return -1;
    } else if (b === MINUS || isDigit(b)) {
      const start = i;
      if (b === MINUS) i++;
      while (i < n && isDigit(src[i]!)) i++;
      const digits = i - start - (b === MINUS ? 1 : 0);
      const next = src[i];
      // Only plain integers that JS prints back unchanged: no fraction or exponent, no leading zero, ≤ 15 digits.
      if (next === DOT || next === 0x65 || next === 0x45 || digits > 15 || (digits > 1 && src[start + (b === MINUS ? 1 : 0)] === D0)) return -1;
      if (b === MINUS && digits === 1 && src[start + 1] === D0) return -1; // -0 prints as 0
      for (let k = start; k < i; k++) out[o++] = src[k]!;
    } else if (b < SPACE) {
      break;
    } else {
      out[o++] = b;
      i++;
    }
  }
  w.moveTo(o);
  return i;
}

function digitsOnly(src: Uint8Array, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (!isDigit(src[k]!)) return false;
  return true;
}
