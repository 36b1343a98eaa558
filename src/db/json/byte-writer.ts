// A growable byte buffer that list reads write their JSON body into, straight from the bytes the
// database sent (postgres.js raw rows), so a page of 100 rows costs no per-column strings, no row
// objects and no JSON.stringify (see docs/adr/0100-list-reads-written-from-raw-rows.md).
//
// Every value is written exactly as the response schema's serializer (fast-json-stringify) wrote the
// decoded row before, so bodies are byte for byte those of the object path:
//   text      "…" with JSON.stringify's escaping (the bytes are copied when nothing needs escaping)
//   integer   the digits as PostgreSQL prints them (int4/int8 below 2^53 print as JS numbers do)
//   decimal   "…" (numeric(38,10) prints with exactly 10 places and never needs escaping)
//   boolean   true / false from PostgreSQL's t / f
//   time      ISO 8601 UTC with milliseconds, as `new Date(text).toISOString()` gives it
//   json      a jsonb value compacted exactly as JSON.stringify(JSON.parse(text)) prints it

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class ByteWriter {
  private buf: Buffer;
  private at = 0;

  constructor(initial = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  /** Starts over (the buffer is kept for the next body). */
  reset(): void {
    this.at = 0;
  }

  /** How many bytes are written: a mark to `rewind` to. */
  get length(): number {
    return this.at;
  }

  /** Drops what was written after `mark` (a row that must be written another way). */
  rewind(mark: number): void {
    this.at = mark;
  }

  /**
   * Room for `n` more bytes, for a writer that fills the buffer itself from `length` on and then
   * calls `moveTo` with its end (a jsonb value compacted in place, values.ts).
   */
  reserve(n: number): Buffer {
    this.room(n);
    return this.buf;
  }

  moveTo(at: number): void {
    this.at = at;
  }

  /** The bytes written so far (a view, valid until the next write). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.at);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  /**
   * Bytes that need no quoting or escaping: pre-encoded keys and punctuation, integers. A loop: cheaper
   * than a native copy for a few bytes.
   */
  raw(src: Uint8Array): void {
    const n = src.length;
    this.room(n);
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) buf[at++] = src[i]!;
    this.at = at;
  }

  /** `src[start, end)`, copied as it is (the bytes need no quoting or escaping). */
  rawRange(src: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    const buf = this.buf;
    let at = this.at;
    for (let i = start; i < end; i++) buf[at++] = src[i]!;
    this.at = at;
  }

  /** `src[start, end)`, copied as it is: a native copy past a few dozen bytes, where it is cheaper than rawRange's loop. */
  copy(src: Buffer, start: number, end: number): void {
    if (end - start < 64) return this.rawRange(src, start, end);
    this.room(end - start);
    this.at += src.copy(this.buf, this.at, start, end);
  }

  /**
   * Copies the bytes of `src` from `start` up to the first one a JSON string cannot hold as it is
   * (a control byte, `"` or `\`) or `end`, and returns where it stopped. Packed rows
   * (packed-row.ts) end each value with a control byte, so this copies one plain value in one pass.
   */
  run(src: Uint8Array, start: number, end: number): number {
    this.room(end - start);
    const buf = this.buf;
    let at = this.at;
    let i = start;
    for (; i < end; i++) {
      const b = src[i]!;
      if (b < 0x20 || b === QUOTE || b === BACKSLASH) break;
      buf[at++] = b;
    }
    this.at = at;
    return i;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  /** A decimal: its digits in quotes. */
  quoted(src: Uint8Array): void {
    const n = src.length;
    this.room(n + 2);
    const buf = this.buf;
    let at = this.at;
    buf[at++] = QUOTE;
    for (let i = 0; i < n; i++) buf[at++] = src[i]!;
    buf[at++] = QUOTE;
    this.at = at;
  }

  /** A UTF-8 string as a JSON string, escaped as JSON.stringify escapes it. */
  text(src: Uint8Array): void {
    const n = src.length;
    this.room(n + 2);
    const buf = this.buf;
    const start = this.at;
    let at = start;
    buf[at++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const b = src[i]!;
      if (b < 0x20 || b === QUOTE || b === BACKSLASH) {
        // Rare: let JSON.stringify escape it (what the object path's serializer did).
        this.at = start;
        this.string(JSON.stringify(Buffer.from(src.buffer, src.byteOffset, n).toString('utf8')));
        return;
      }
      buf[at++] = b;
    }
    buf[at++] = QUOTE;
    this.at = at;
  }

  /** A JS string of JSON text (the slow paths). */
  string(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.room(n);
    this.at += this.buf.write(s, this.at, 'utf8');
  }
}
