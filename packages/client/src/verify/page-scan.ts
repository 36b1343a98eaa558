// A page of proofs scanned once from the bytes the gateway sent (ADR 0370, ADR 0386): where each of
// its items is, so that the page is parsed one proof at a time (each proof checked, replayed and let
// go before the next is parsed, ADR 0386), and the leaves of each item's events, each hashed as the
// bytes it arrived as, sha256(0x00 ‖ bytes), instead of being parsed, written again as canonical
// JSON and encoded to UTF-8. The gateway writes every event as the canonical text it committed
// (ADR 0300), so for an honest gateway these are the same bytes.
//
// Why it is sound: the events the replay uses are JSON.parse of these very bytes (their UTF-8
// decoding: a text that hashes to the chain's root is the committed text, valid UTF-8), and the scan below
// finds the same values JSON.parse does (strings and escapes, nesting, whitespace; a page whose
// `items` or an item's `events` key appears twice, or is written with an escape, is not scanned, as
// the parser's choice of the last duplicate would be another value). A root recomputed from these
// leaves that equals the chain's is therefore the root of the texts the events were parsed from.
// When it does not equal it (a gateway that writes valid but not canonical JSON, or a tampered
// batch), verifyUserBatch hashes the canonical form of the parsed events instead and judges by that,
// exactly as for a proof fetched alone: the fast path can only save work, never change a verdict.
// Parsed a part at a time (each item, each other member's key and value: proof-page.ts), the page
// gives the value JSON.parse of the whole gives: the scan checks the text between the parts (the
// braces, brackets, commas and colons, nothing else but whitespace) and the parser checks each part.
import { sha256Into } from './sha256-sync.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const encoder = new TextEncoder();
const ITEMS = encoder.encode('"items"');
const EVENTS = encoder.encode('"events"');

/** Thrown inside the scan for anything it does not read as JSON.parse would; the page is then not scanned. */
class Unscannable extends Error {}

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

class Scanner {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  space(): void {
    while (this.at < this.bytes.length && isSpace(this.bytes[this.at]!)) this.at++;
  }

  /** The next byte after whitespace, consumed when it is `b`. */
  take(b: number): boolean {
    this.space();
    if (this.bytes[this.at] !== b) return false;
    this.at++;
    return true;
  }

  expect(b: number): void {
    if (!this.take(b)) throw new Unscannable();
  }

  /** A string from its opening quote: the offset just past its closing quote. */
  string(): number {
    const { bytes } = this;
    if (bytes[this.at] !== QUOTE) throw new Unscannable();
    for (let i = this.at + 1; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) return (this.at = i + 1);
    }
    throw new Unscannable();
  }

  /** Any value: [start, end) of its text. */
  value(): [number, number] {
    this.space();
    const start = this.at;
    const { bytes } = this;
    const first = bytes[start];
    if (first === QUOTE) return [start, this.string()];
    if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
      // A number or a literal: up to the next delimiter.
      let i = start;
      while (i < bytes.length && bytes[i] !== COMMA && bytes[i] !== CLOSE_OBJECT && bytes[i] !== CLOSE_ARRAY && !isSpace(bytes[i]!)) i++;
      if (i === start) throw new Unscannable();
      return [start, (this.at = i)];
    }
    let depth = 0;
    for (let i = start; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === QUOTE) {
        this.at = i;
        i = this.string() - 1;
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (--depth === 0) return [start, (this.at = i + 1)];
      }
    }
    throw new Unscannable();
  }

  /** The members of an object from its `{`: calls `member` with each key's bytes (quotes included) at its value. */
  object(member: (keyStart: number, keyEnd: number) => void): void {
    this.expect(OPEN_OBJECT);
    if (this.take(CLOSE_OBJECT)) return;
    do {
      this.space();
      const keyStart = this.at;
      const keyEnd = this.string();
      this.expect(COLON);
      member(keyStart, keyEnd);
    } while (this.take(COMMA));
    this.expect(CLOSE_OBJECT);
  }

  /** The elements of an array from its `[`: calls `element` at each. */
  array(element: () => void): void {
    this.expect(OPEN_ARRAY);
    if (this.take(CLOSE_ARRAY)) return;
    do element();
    while (this.take(COMMA));
    this.expect(CLOSE_ARRAY);
  }

  /** Is the key at [start, end) `name` (both with quotes)? A key with an escape is refused: JSON.parse would read it otherwise. */
  is(start: number, end: number, name: Uint8Array): boolean {
    const { bytes } = this;
    for (let i = start + 1; i < end - 1; i++) if (bytes[i] === BACKSLASH) throw new Unscannable();
    if (end - start !== name.length) return false;
    for (let i = 0; i < name.length; i++) if (bytes[start + i] !== name[i]) return false;
    return true;
  }
}

/**
 * Where a page's parts are and its leaves, in typed arrays (a worker hands them over by transfer).
 * Offsets are into the page's bytes, [start, end).
 */
export interface PageScan {
  /** Each item of `items`, in order: start and end, two numbers per item. */
  items: Int32Array;
  /** How many leaves each item has (-1: the item has no `events` array). */
  counts: Int32Array;
  /** Every item's leaves, item after item, 32 bytes each. */
  leaves: Uint8Array;
  /** Every other member of the page (nextCursor): key start, key end, value start, value end, four numbers per member. */
  members: Int32Array;
}

/**
 * The page's parts and leaves, or null when the text is not scanned (see above): the caller then
 * parses the page whole and hashes the parsed events as usual.
 */
export function scanPage(body: Uint8Array): PageScan | null {
  const bytes = body;
  const s = new Scanner(bytes);
  const items: number[] = [];
  const counts: number[] = [];
  const members: number[] = [];
  /** Every event's text, [start, end), item after item. */
  const events: number[] = [];
  let sawItems = false;
  try {
    s.object((keyStart, keyEnd) => {
      if (!s.is(keyStart, keyEnd, ITEMS)) {
        const [valueStart, valueEnd] = s.value();
        return void members.push(keyStart, keyEnd, valueStart, valueEnd);
      }
      if (sawItems) throw new Unscannable();
      sawItems = true;
      s.array(() => {
        s.space();
        const start = s.at;
        let count = -1;
        s.object((k0, k1) => {
          if (!s.is(k0, k1, EVENTS)) return void s.value();
          if (count >= 0) throw new Unscannable();
          count = 0;
          s.array(() => {
            events.push(...s.value());
            count++;
          });
        });
        items.push(start, s.at);
        counts.push(count);
      });
    });
    s.space();
    if (s.at !== bytes.length || !sawItems) return null;
  } catch (err) {
    if (err instanceof Unscannable) return null;
    throw err;
  }
  const leaves = new Uint8Array((events.length / 2) * 32);
  // The 0x00 before each event is written in place and the byte it replaced put back at once, so
  // the page's bytes come out as they went in without a copy of the whole page: the byte before an
  // element ('[', ',' or a space) is never part of another element's text.
  for (let i = 0; i < events.length; i += 2) {
    const start = events[i]!;
    const before = bytes[start - 1]!;
    bytes[start - 1] = 0;
    try {
      sha256Into(bytes, start - 1, events[i + 1]!, leaves, (i / 2) * 32);
    } finally {
      bytes[start - 1] = before;
    }
  }
  return { items: Int32Array.from(items), counts: Int32Array.from(counts), leaves, members: Int32Array.from(members) };
}

/**
 * Whether `scan` is one scanPage could have given for a page of `length` bytes: parts in order and
 * within the page, leaves adding up. A worker's scan is checked so before its parts are read (a
 * scan that is not is done again here).
 */
export function plausibleScan(scan: PageScan, length: number): boolean {
  if (!(scan.items instanceof Int32Array && scan.counts instanceof Int32Array && scan.leaves instanceof Uint8Array && scan.members instanceof Int32Array)) return false;
  if (scan.items.length !== 2 * scan.counts.length || scan.members.length % 4 !== 0) return false;
  let leaves = 0;
  for (const c of scan.counts) leaves += Math.max(0, c);
  if (leaves * 32 !== scan.leaves.length) return false;
  const inOrder = (pairs: Int32Array): boolean => {
    let at = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      if (!(pairs[i]! >= at && pairs[i + 1]! > pairs[i]! && pairs[i + 1]! <= length)) return false;
      at = pairs[i + 1]!;
    }
    return true;
  };
  return inOrder(scan.items) && inOrder(scan.members);
}
