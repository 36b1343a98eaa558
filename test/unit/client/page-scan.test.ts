// A page of proofs scanned from its bytes (ADR 0370, ADR 0386): on any page text, each leaf is
// sha256(0x00 ‖ the bytes of exactly the value JSON.parse reads as that event), and the page read a
// proof at a time (each item parsed from its own bytes, the other members apart) is the value
// JSON.parse gives of the whole (property, with whitespace, escapes, non-ASCII, nesting and other
// members around); a page the scan cannot read as the parser does is refused (duplicate or escaped
// keys, malformed) and then parsed whole; a part that is not JSON is `bad_response`; and
// verifyHistory over pages as bytes gives the verdicts it gives without them: an honest page
// verified, a page written in another (valid, not canonical) form verified through the canonical
// fallback, a tampered event failed at the same step with the same roots as verifyUserBatch alone,
// and no proof kept once checked.
import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanPage, type PageScan } from '../../../packages/client/src/verify/page-scan.js';
import { readProofPage } from '../../../packages/client/src/verify/proof-page.js';
import { verifyHistory, type HistorySource } from '../../../packages/client/src/verify/history.js';
import { verifyUserBatch } from '../../../packages/client/src/verify/verify-batch.js';
import { Transport, type Sender } from '../../../packages/client/src/transport.js';
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
/** Each item's leaves in a scan, or null for an item without an events array. */
const leavesOf = (scan: PageScan): Array<Uint8Array | null> => {
  let at = 0;
  return Array.from(scan.counts, (count) => {
    if (count < 0) return null;
    const l = scan.leaves.subarray(at, at + 32 * count);
    at += 32 * count;
    return l;
  });
};
/** The page read a proof at a time, as one value. */
const readWhole = (bytes: Uint8Array, scan?: PageScan | null) => {
  const page = readProofPage(scan === undefined ? { bytes } : { bytes, scan }, '/v1/x');
  return { items: Array.from({ length: page.size }, (_, k) => page.at(k).proof), nextCursor: page.nextCursor };
};
const event = fc.dictionary(fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '😀', 'z', ' ', ',', ']', '}') }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });

describe('scanPage', () => {
  it('hashes exactly the text JSON.parse reads as each event, and reads the page a proof at a time as JSON.parse reads it whole, whatever the layout', () => {
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
          const scan = scanPage(utf8.encode(page));
          expect(scan).not.toBeNull();
          const leaves = leavesOf(scan!);
          const parsed = JSON.parse(page) as { items: Array<{ events: unknown[] }>; nextCursor: number | null };
          // Read a proof at a time (the text decoded once and sliced, or each part decoded: beyond ASCII).
          expect(readWhole(utf8.encode(page), scan)).toEqual(parsed);
          expect(readWhole(utf8.encode(page))).toEqual(parsed);
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
    expect(leavesOf(scanPage(utf8.encode('{"items":[{"userSeq":1},{"events":[]}],"nextCursor":null}'))!).map((l) => l && l.length)).toEqual([null, 0]);
    expect(leavesOf(scanPage(utf8.encode('{"items":[],"nextCursor":null}'))!)).toEqual([]);
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
      '{"nextCursor":null}',
      '{"items":[1]}',
      '',
    ]) {
      expect([page, scanPage(utf8.encode(page))]).toEqual([page, null]);
    }
  });

  it('a page it does not scan is parsed whole; a part that is not JSON is bad_response, not a verdict', () => {
    // Valid but unscannable (an escaped key): parsed whole, as JSON.parse reads it.
    const escaped = '{"\\u0069tems":[{"userSeq":1,"events":[]}],"nextCursor":null}';
    expect(readWhole(utf8.encode(escaped))).toEqual(JSON.parse(escaped));
    // A scannable page with a bad literal inside an item, or in another member: the scan passes values it does not read, the parse refuses them.
    for (const page of ['{"items":[{"events":[{"a":tru}]}],"nextCursor":null}', '{"items":[],"nextCursor":nul}', '{"items":[{"events":[]}]}x']) {
      let thrown: unknown;
      try {
        readWhole(utf8.encode(page));
      } catch (err) {
        thrown = err;
      }
      expect([page, thrown]).toEqual([page, expect.objectContaining({ code: 'bad_response' })]);
    }
  });

  it('a scan that cannot be one of the page (leaves that do not add up, parts past its end or out of order) is made again from the bytes', () => {
    const page = utf8.encode('{"items":[{"userSeq":1,"events":[{"a":1}]},{"userSeq":2,"events":[]}],"nextCursor":4}');
    const good = scanPage(page)!;
    const broken = [
      { ...good, leaves: new Uint8Array(5) },
      { ...good, items: Int32Array.from([...good.items.slice(0, 3), page.length + 10]) },
      { ...good, items: Int32Array.from([good.items[2]!, good.items[3]!, good.items[0]!, good.items[1]!]) },
      { ...good, counts: Int32Array.from([1]) },
    ];
    for (const scan of broken) expect(readWhole(page, scan)).toEqual(JSON.parse(new TextDecoder().decode(page)));
  });

  it('leaves the bytes it is given unchanged', () => {
    const body = utf8.encode('{"items":[{"events":[{"a":1},{"b":2}]}]}');
    const copy = body.slice();
    scanPage(body);
    expect(body).toEqual(copy);
  });
});

/** A source serving `pageText` as its one page of proofs, as bytes as GatewayClient serves them (null: parsed, as values). */
function source(batches: UserBatch[], proofs: UserBatchProof[], pageText: string | null): HistorySource {
  return {
    listUserBatches: async () => ({ items: batches, nextCursor: null }),
    getUserBatchProof: async (_p, userSeq) => proofs[userSeq - 1]!,
    listUserBatchProofs: async () => ({ items: proofs, nextCursor: null }),
    ...(pageText !== null ? { getUserBatchProofPage: async () => ({ bytes: utf8.encode(pageText) }) } : {}),
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
        getUserBatchProofPage: async (party: string, query: { since?: number; limit?: number }) => {
          if (asked++ < refusals) throw new GatewayError(429, `/v1/users/${party}/user-batches/proofs`, body);
          return inner.getUserBatchProofPage!(party, query);
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

describe('an answer as bytes (callBytes)', () => {
  it('is the bytes the sender read, whatever text it gave beside them; a sender without bytes gives its text encoded', async () => {
    const kept = '{"items":[{"events":[{"a":1}]}],"nextCursor":null}';
    const sender: Sender = async () => ({ status: 200, text: '{"items":[{"events":[{"a":2}]}],"nextCursor":null}', bytes: utf8.encode(kept) });
    const answer = await new Transport('http://gateway.invalid', undefined, sender).callBytes({ method: 'GET', path: '/v1/x' });
    expect(new TextDecoder().decode(answer.bytes)).toBe(kept);
    expect('scan' in answer).toBe(false);
    const textOnly: Sender = async () => ({ status: 200, text: kept });
    expect(new TextDecoder().decode((await new Transport('http://gateway.invalid', undefined, textOnly).callBytes({ method: 'GET', path: '/v1/x' })).bytes)).toBe(kept);
    // A refusal is the same GatewayError as call's.
    const refusing: Sender = async () => ({ status: 503, text: JSON.stringify({ error: 'down', code: 'db_unavailable' }) });
    await expect(new Transport('http://gateway.invalid', { ...(await import('../../../packages/client/src/retry.js')).defaultRetry, retries: 0 }, refusing).callBytes({ method: 'GET', path: '/v1/x' })).rejects.toMatchObject({ status: 503, code: 'db_unavailable' });
  });
});

describe('verifyHistory reading pages a proof at a time', () => {
  it('lets each proof go once it is checked: the proofs of a page checked before are collected while later pages are checked', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // 250 batches of one event each (pending: no chain record), served as three pages of bytes, a task apart.
    const party = `p::${'1'.repeat(64)}`;
    const proofs = Array.from({ length: 250 }, (_, i) => ({
      party,
      userSeq: i + 1,
      status: 'pending',
      events: [{ seq: i + 1, kind: 'engine.order_placed', party, ts: '2026-01-01T00:00:00.000Z', payload: { note: 'x'.repeat(200) } }],
      chain: null,
      path: [],
    }));
    const root = (userSeq: number) => userSeq.toString(16).padStart(64, '0');
    const batches = proofs.map((p) => ({ party, userSeq: p.userSeq, batchNum: null, root: root(p.userSeq), prevRoot: root(p.userSeq - 1), eventCount: 1, txId: null, committedAt: '2026-01-01T00:00:00.000Z' }));
    const src: HistorySource = {
      listUserBatches: async () => ({ items: batches as UserBatch[], nextCursor: null }),
      getUserBatchProof: async (_p, userSeq) => proofs[userSeq - 1] as unknown as UserBatchProof,
      getUserBatchProofPage: async (_p, { since = 0, limit = 100 }) => {
        await new Promise((r) => setTimeout(r, 5));
        const items = proofs.slice(since, since + limit);
        return { bytes: utf8.encode(JSON.stringify({ items, nextCursor: since + limit < proofs.length ? since + limit : null })) };
      },
    };
    const collected = new Set<number>();
    const registry = new FinalizationRegistry<number>((userSeq) => collected.add(userSeq));
    let collectedByPage3 = -1;
    const v = await verifyHistory(src, party, {
      onBatch: (_i, _verdict, proof) => {
        registry.register(proof, proof.userSeq);
        if (proof.userSeq === 101) gc(); // on the second page: the first page's proofs are garbage by now
        if (proof.userSeq === 201) collectedByPage3 = [...collected].filter((s) => s <= 100).length;
      },
    });
    expect([v.status, v.pending, v.events]).toEqual(['pending', 250, 250]);
    expect(collectedByPage3).toBeGreaterThanOrEqual(90);
  });
});
