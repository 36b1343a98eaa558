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
