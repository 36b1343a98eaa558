// The leaves of a page of proofs hashed from its bytes (ADR 0370): on any page text, each leaf is
// sha256(0x00 ‖ the bytes of exactly the value JSON.parse reads as that event) (property, with
// whitespace, escapes, non-ASCII, nesting and other members around); a page the scan cannot read as
// the parser does is refused (duplicate or escaped keys, malformed); and verifyHistory over pages
// with their bytes gives the verdicts it gives without them: an honest page verified, a page written
// in another (valid, not canonical) form verified through the canonical fallback, a tampered event
// failed at the same step with the same roots as verifyUserBatch alone; and the bytes a page is kept
// with are the ones it was parsed from, whatever a sender says beside them.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leavesOfPage } from '../../../packages/client/src/verify/page-leaves.js';
import { verifyHistory, type HistorySource } from '../../../packages/client/src/verify/history.js';
import { verifyUserBatch } from '../../../packages/client/src/verify/verify-batch.js';
import { RESPONSE_BYTES, Transport, type Sender } from '../../../packages/client/src/transport.js';
import { GatewayError } from '../../../packages/client/src/errors.js';
import type { UserBatch, UserBatchProof } from '../../../packages/client/src/generated/wire.js';
import { committedHistory, HISTORY_PARTY, proofPageText, proofText } from '../../support/committed-history.js';

const utf8 = new TextEncoder();
const leafOf = (text: string) => createHash('sha256').update(Buffer.from([0])).update(Buffer.from(text, 'utf8')).digest('hex');
const hexes = (leaves: Uint8Array) => Array.from({ length: leaves.length / 32 }, (_, i) => Buffer.from(leaves.subarray(32 * i, 32 * i + 32)).toString('hex'));

const space = fc.constantFrom('', ' ', '\n', '\t ', '\r\n  ');
/** A JSON text of a value, in a random layout: compact, indented, or with spaces around its tokens. */
const written = (value: unknown) =>
  fc.constantFrom(0, 1, 2).map((indent) => (indent === 0 ? JSON.stringify(value) : JSON.stringify(value, null, indent)));
const event = fc.dictionary(fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '😀', 'z', ' ', ',', ']', '}') }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });

describe('leavesOfPage', () => {
  it('hashes exactly the text JSON.parse reads as each event, whatever the layout around it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(event.chain(written), { maxLength: 6 }), fc.boolean(), space, space), { maxLength: 5 }),
        space,
        fc.boolean(),
        (items, pad, cursorFirst) => {
          // Each item: its events' texts, an extra member before or after `events`, spaces between tokens.
          const itemTexts = items.map(([texts, before, s1, s2]) => {
            const events = `"events"${s1}:${s2}[${texts.map((t) => `${s1}${t}${s2}`).join(',')}]`;
            const other = `"path":${s1}[{"side":"left","hash":"${'0'.repeat(64)}"}]`;
            return `{${s2}${before ? `${other},${events}` : `${events},${other}`}${s1}}`;
          });
          const list = `"items"${pad}:${pad}[${itemTexts.join(`,${pad}`)}]`;
          const page = `${pad}{${cursorFirst ? `"nextCursor":null,${list}` : `${list},"nextCursor":7`}}${pad}`;
          const leaves = leavesOfPage(utf8.encode(page));
          expect(leaves).not.toBeNull();
          const parsed = JSON.parse(page) as { items: Array<{ events: unknown[] }> };
          expect(leaves!.length).toBe(items.length);
          items.forEach(([texts], i) => {
            expect(hexes(leaves![i]!)).toEqual(texts.map(leafOf));
            // The hashed texts are the values the parser gave.
            texts.forEach((t, k) => expect(JSON.parse(t)).toEqual(parsed.items[i]!.events[k]));
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('an item without events has none; an empty page has no items', () => {
    expect(leavesOfPage(utf8.encode('{"items":[{"userSeq":1},{"events":[]}],"nextCursor":null}'))!.map((l) => l && l.length)).toEqual([null, 0]);
    expect(leavesOfPage(utf8.encode('{"items":[],"nextCursor":null}'))).toEqual([]);
  });

  it('refuses what the parser could read otherwise: duplicate or escaped keys, a malformed or unfinished text', () => {
    for (const page of [
      '{"items":[],"items":[]}',
      '{"items":[{"events":[{"a":1}],"events":[{"a":2}]}]}',
      '{"items":[{"\\u0065vents":[{"a":1}]}]}',
      '{"\\u0069tems":[]}',
      '{"items":[{"events":[{"a":1}]}]} x',
      '{"items":[{"events":[{"a":"1}]}]}',
      '{"items":[{"events":[{"a":1}',
      '[{"items":[]}]',
      '',
    ]) {
      expect([page, leavesOfPage(utf8.encode(page))]).toEqual([page, null]);
    }
  });

  it('leaves the bytes it is given unchanged', () => {
    const body = utf8.encode('{"items":[{"events":[{"a":1},{"b":2}]}]}');
    const copy = body.slice();
    leavesOfPage(body);
    expect(body).toEqual(copy);
  });
});

/** A source serving `pageText` as its one page of proofs, with its bytes kept as GatewayClient keeps them. */
function source(batches: UserBatch[], proofs: UserBatchProof[], pageText: string | null): HistorySource {
  return {
    listUserBatches: async () => ({ items: batches, nextCursor: null }),
    getUserBatchProof: async (_p, userSeq) => proofs[userSeq - 1]!,
    listUserBatchProofs: async () => {
      const text = pageText ?? JSON.stringify({ items: proofs, nextCursor: null });
      const page = JSON.parse(text) as { items: UserBatchProof[]; nextCursor: null };
      if (pageText !== null) Object.defineProperty(page, RESPONSE_BYTES, { value: utf8.encode(text) });
      return page;
    },
  };
}

const pageOf = (proofTexts: string[]) => `{"items":[${proofTexts.join(',')}],"nextCursor":null}`;

describe('verifyHistory over pages with their bytes', () => {
  it('an honest page: verified, with the verdicts of the same proofs checked one by one', async () => {
    const { batches, proofs } = await committedHistory();
    const fast = await verifyHistory(source(batches, proofs, proofPageText(proofs)), HISTORY_PARTY);
    const alone = await verifyHistory({ ...source(batches, proofs, null), listUserBatchProofs: undefined } as HistorySource, HISTORY_PARTY);
    expect(fast.status).toBe('verified');
    expect(fast.verdicts).toEqual(alone.verdicts);
  });

  it('a page written in another valid form (indented, members in another order): verified through the canonical form', async () => {
    const { batches, proofs } = await committedHistory();
    const v = await verifyHistory(source(batches, proofs, JSON.stringify({ nextCursor: null, items: proofs }, null, 2)), HISTORY_PARTY);
    expect(v.status).toBe('verified');
    expect(v.verified).toBe(2);
  });

  it('a tampered event: failed at the same step, with the same roots, as verifyUserBatch alone', async () => {
    const { batches, proofs } = await committedHistory();
    const texts = proofs.map(proofText);
    // The second batch's fill at another price, in its bytes and so in its parsed event.
    const tampered = texts[1]!.replace(/"price":"2002"/, '"price":"1"');
    expect(tampered).not.toBe(texts[1]);
    const page = pageOf([texts[0]!, tampered]);
    const v = await verifyHistory(source(batches, proofs, page), HISTORY_PARTY);
    const alone = await verifyUserBatch(JSON.parse(tampered) as UserBatchProof);
    expect(v.status).toBe('failed');
    expect(alone).toMatchObject({ status: 'failed', step: 'userRoot' });
    expect(v.verdicts[1]).toEqual(alone);
  });
});

describe("a page refused for want of room in the gateway's build lane", () => {
  /** A source that refuses its first `refusals` pages with `body` (429), then serves them. */
  function refusing(batches: UserBatch[], proofs: UserBatchProof[], refusals: number, body: { error: string; code: string; [k: string]: unknown }) {
    const inner = source(batches, proofs, proofPageText(proofs));
    let asked = 0;
    return {
      source: {
        ...inner,
        listUserBatchProofs: async (party: string, query: { since?: number; limit?: number }) => {
          if (asked++ < refusals) throw new GatewayError(429, `/v1/users/${party}/user-batches/proofs`, body);
          return inner.listUserBatchProofs!(party, query);
        },
      } satisfies HistorySource,
      asked: () => asked,
    };
  }

  it('429 budget_exhausted (proof_pages) is asked again after its Retry-After: verified, as if never refused', async () => {
    const { batches, proofs } = await committedHistory();
    const busy = refusing(batches, proofs, 2, { error: 'busy', code: 'budget_exhausted', budget: 'proof_pages', retryAfterS: 0.02 });
    const v = await verifyHistory(busy.source, HISTORY_PARTY);
    expect(v.status).toBe('verified');
    expect(busy.asked()).toBe(3);
  });

  it('any other 429 is the caller\'s to handle: thrown, not waited out', async () => {
    const { batches, proofs } = await committedHistory();
    const limited = refusing(batches, proofs, 1, { error: 'slow down', code: 'rate_limited', retryAfterS: 0.02 });
    await expect(verifyHistory(limited.source, HISTORY_PARTY)).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(limited.asked()).toBe(1);
  });

  it('an abort while waiting ends the verification', async () => {
    const { batches, proofs } = await committedHistory();
    const busy = refusing(batches, proofs, 1, { error: 'busy', code: 'budget_exhausted', budget: 'proof_pages', retryAfterS: 5 });
    const controller = new AbortController();
    const run = verifyHistory(busy.source, HISTORY_PARTY, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(run).rejects.toThrow('aborted');
  });
});

describe('the bytes a page is kept with', () => {
  it('are the bytes it was parsed from, whatever text the sender gave beside them', async () => {
    const kept = '{"items":[{"events":[{"a":1}]}],"nextCursor":null}';
    const sender: Sender = async () => ({ status: 200, text: '{"items":[{"events":[{"a":2}]}],"nextCursor":null}', bytes: utf8.encode(kept) });
    const transport = new Transport('http://gateway.invalid', undefined, sender);
    const page = await transport.call<{ items: Array<{ events: unknown[] }> }>({ method: 'GET', path: '/v1/x', keepBytes: true });
    expect(page.items[0]!.events).toEqual([{ a: 1 }]);
    expect(new TextDecoder().decode((page as { [RESPONSE_BYTES]?: Uint8Array })[RESPONSE_BYTES])).toBe(kept);
    // Without keepBytes the text is the answer, and no bytes are kept.
    const plain = await transport.call<{ items: Array<{ events: unknown[] }> }>({ method: 'GET', path: '/v1/x' });
    expect(plain.items[0]!.events).toEqual([{ a: 2 }]);
    expect(RESPONSE_BYTES in plain).toBe(false);
  });
});
