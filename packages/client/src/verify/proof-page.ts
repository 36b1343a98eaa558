// A page of proofs read one proof at a time (ADR 0386). verifyHistory used to have each page parsed
// whole (6.6 MB of text, 10 000 events) and every proof kept until the end: the young generation's
// collector then copied all of it, most of the main thread's time in a first verification of
// 100 000 events in Chromium. Read through this, each proof is parsed from its own bytes when its
// turn comes, checked, replayed and let go before the next one is parsed, so it dies young.
//
// The parts are where scanPage found them (in the verification worker, or here); a page it does not
// scan is parsed whole, as before. Parsed a part at a time the page gives what JSON.parse of the
// whole gives (page-scan.ts), and a part that is not JSON is the same `bad_response` the transport
// answers for a body that is not JSON.
import type { UserBatchProof } from '../generated/wire.js';
import { GatewayError } from '../errors.js';
import type { BytesAnswer } from '../transport.js';
import { plausibleScan, scanPage } from './page-scan.js';

/** A page of proofs as the gateway sent it: its bytes, and the scan of them when the sender made it (undefined: not yet; null: not scannable). */
export type ProofPageBytes = BytesAnswer;

/** One proof of a page, and its events' leaves hashed from the bytes they came as (null: none). */
export interface PageProof {
  proof: UserBatchProof;
  leaves: Uint8Array | null;
}

export interface ProofPage {
  /** How many proofs the page holds. */
  readonly size: number;
  /** The page's nextCursor (null: the last page). */
  readonly nextCursor: number | null;
  /** The userSeq of the page's last proof (undefined: an empty page, or a last item without one). */
  readonly lastUserSeq: number | undefined;
  /** The proof at `k` (0 ≤ k < size), parsed now; the last one is parsed once and kept. */
  at(k: number): PageProof;
}

const utf8 = new TextDecoder();

const notJson = (target: string, what: string): GatewayError =>
  new GatewayError(200, target, { error: `the gateway answered a page of proofs whose ${what} is not JSON`, code: 'bad_response' });

function parsed(bytes: Uint8Array, start: number, end: number, target: string, what: string): unknown {
  try {
    return JSON.parse(utf8.decode(bytes.subarray(start, end)));
  } catch {
    throw notJson(target, what);
  }
}

/** A page already parsed (a source that gives pages as values): its proofs as they are, without leaves. */
export function parsedProofPage(page: { items: UserBatchProof[]; nextCursor: number | null }): ProofPage {
  const items = Array.isArray(page?.items) ? page.items : [];
  return {
    size: items.length,
    nextCursor: typeof page?.nextCursor === 'number' ? page.nextCursor : null,
    lastUserSeq: items.at(-1)?.userSeq,
    at: (k) => ({ proof: items[k]!, leaves: null }),
  };
}

/** The page `bytes` holds, read a proof at a time; `target` names it in errors. */
export function readProofPage({ bytes, scan }: ProofPageBytes, target: string): ProofPage {
  const given = scan !== undefined && (scan === null || plausibleScan(scan, bytes.length));
  const parts = given ? scan : scanPage(bytes);
  if (parts === null) {
    // Not scanned: parsed whole, each proof's leaves then hashed from its parsed events.
    const whole = parsed(bytes, 0, bytes.length, target, 'text') as { items?: unknown; nextCursor?: unknown } | null;
    if (typeof whole !== 'object' || whole === null || !Array.isArray(whole.items)) throw notJson(target, 'items array');
    return parsedProofPage(whole as { items: UserBatchProof[]; nextCursor: number | null });
  }
  // The page's other members, parsed as JSON.parse would (the last of a repeated key wins).
  const members: Record<string, unknown> = {};
  for (let i = 0; i < parts.members.length; i += 4) {
    const key = parsed(bytes, parts.members[i]!, parts.members[i + 1]!, target, 'member name');
    members[String(key)] = parsed(bytes, parts.members[i + 2]!, parts.members[i + 3]!, target, `member ${String(key)}`);
  }
  // Where each item's leaves start.
  const offsets = new Int32Array(parts.counts.length);
  for (let k = 0, at = 0; k < parts.counts.length; k++) {
    offsets[k] = at;
    at += Math.max(0, parts.counts[k]!) * 32;
  }
  const size = parts.counts.length;
  // The page's text decoded once: when it has as many UTF-16 units as the page has bytes, every
  // byte decoded to one unit in place (a sequence of several bytes gives fewer units, and none gives
  // more), so a part's text is the slice at its byte offsets, exactly its own bytes decoded. Else
  // (text beyond ASCII) each part is decoded from its bytes. Decoding each proof apart cost as
  // much as parsing it in Chromium (a string of Blink's per call), one slice of one text nothing.
  const text = utf8.decode(bytes);
  const sliced = text.length === bytes.length;
  const item = (k: number): unknown => {
    const start = parts.items[2 * k]!;
    const end = parts.items[2 * k + 1]!;
    if (!sliced) return parsed(bytes, start, end, target, `item ${k}`);
    try {
      return JSON.parse(text.slice(start, end));
    } catch {
      throw notJson(target, `item ${k}`);
    }
  };
  const read = (k: number): PageProof => {
    const proof = item(k) as UserBatchProof;
    const count = parts.counts[k]!;
    return { proof, leaves: count < 0 ? null : parts.leaves.subarray(offsets[k]!, offsets[k]! + count * 32) };
  };
  const last = size > 0 ? read(size - 1) : undefined;
  const lastUserSeq = (last?.proof as { userSeq?: unknown } | null | undefined)?.userSeq;
  return {
    size,
    nextCursor: typeof members.nextCursor === 'number' ? members.nextCursor : null,
    lastUserSeq: typeof lastUserSeq === 'number' ? lastUserSeq : undefined,
    at: (k) => (k === size - 1 && last ? last : read(k)),
  };
}
