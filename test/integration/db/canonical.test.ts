// Canonical JSON written from the text PostgreSQL prints for jsonb (src/db/json/canonical.ts) and
// events written as their envelopes' canonical JSON from raw rows (src/db/json/canonical-event.ts,
// ADR 0360): always the text the client's canonicalJson writes for the same value, byte for byte,
// whether the byte writer handles the value or hands it to the JS path.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteWriter } from '../../../src/db/json/byte-writer.js';
import { writeCanonicalJsonb } from '../../../src/db/json/canonical.js';
import { canonicalEvents, EVENT_TEXT_COLUMNS } from '../../../src/db/json/canonical-event.js';
import type { RawRow } from '../../../src/db/json/row-shape.js';
import { canonicalJson, leafText } from '../../../packages/client/src/verify/scheme.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Each JSON text as PostgreSQL prints it once stored as jsonb, in one round trip. */
async function printed(texts: readonly string[]): Promise<string[]> {
  const rows = await db.sql<Array<{ t: string }>>`SELECT x::jsonb::text AS t FROM unnest(${db.sql.array([...texts])}::text[]) WITH ORDINALITY u(x, n) ORDER BY n`;
  return rows.map((r) => r.t);
}

/** What the byte writer writes for a printed text, and whether it took the value (false: the caller's JS path). */
function written(text: string): { ok: boolean; text: string } {
  const w = new ByteWriter(16);
  w.byte(0x5b); // something before it, which a refusal must leave as it was
  const ok = writeCanonicalJsonb(w, Buffer.from(text, 'utf8'));
  const out = w.bytes().toString('utf8');
  expect(out[0]).toBe('[');
  return { ok, text: out.slice(1) };
}

// PostgreSQL's jsonb holds no \u0000 in a string and no lone surrogate (its text is UTF-8): a JSON
// text holding either, raw or escaped (JSON.stringify escapes both), is not stored.
const storable = (s: string): boolean => !s.includes('\u0000') && !/\p{Cs}/u.test(s) && !/\\u(0000|d[89a-f])/i.test(s);

describe('writeCanonicalJsonb', () => {
  it('writes what canonicalJson writes for the parsed value, on every value it takes (property, arbitrary JSON)', async () => {
    const values = fc.sample(fc.jsonValue({ maxDepth: 4 }).filter((v) => storable(JSON.stringify(v))), { numRuns: 600, seed: 360 });
    const texts = await printed(values.map((v) => JSON.stringify(v)));
    let taken = 0;
    for (const text of texts) {
      const { ok, text: out } = written(text);
      if (!ok) {
        expect(out).toBe('');
        continue;
      }
      taken++;
      expect(out).toBe(canonicalJson(JSON.parse(text)));
    }
    expect(taken).toBeGreaterThan(100);
  });

  it('takes every value of the shape events have (ASCII keys, strings, integers, booleans, null, nesting) and writes it exactly', async () => {
    const key = fc.stringMatching(/^[A-Za-z_ !#$%&'()*+,./:;<=>?@[\]^`{|}~-][\x20-\x21\x23-\x5b\x5d-\x7e]{0,8}$/);
    const leaf = fc.oneof(fc.string().filter(storable), fc.integer({ min: -(10 ** 15) + 1, max: 10 ** 15 - 1 }), fc.boolean(), fc.constant(null));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
      array: fc.array(tie('tree'), { maxLength: 4 }),
      object: fc.dictionary(key, tie('tree'), { maxKeys: 8 }),
    }));
    const values = fc.sample(fc.dictionary(key, tree, { maxKeys: 12 }), { numRuns: 400, seed: 3600 });
    const texts = await printed(values.map((v) => JSON.stringify(v)));
    for (const text of texts) expect(written(text)).toEqual({ ok: true, text: canonicalJson(JSON.parse(text)) });
  });

  it('orders keys as canonicalJson does where byte order and length order differ, and leaves the rest to the JS path', async () => {
    const exact = [
      { b: 1, a: 2, ab: 3, 'a b': 4, 'a!': 5, '': 6, B: 7, aa: { z: [], y: {}, x: [{ d: 1, c: 2 }] } },
      { legs: [{ size: '0.01', side: 'buy', fee: '0', positionSize: '-1' }], price: '1', matchId: 'm' },
      { s: 'quote " backslash \\ newline \n tab \t control \u0001 é 😀 \u2028', n: -12, z: 0, t: true, f: false, u: null },
      [],
      {},
      'a string',
      123456789012345,
    ];
    for (const [i, text] of (await printed(exact.map((v) => JSON.stringify(v)))).entries()) {
      expect([i, written(text)]).toEqual([i, { ok: true, text: canonicalJson(exact[i]) }]);
    }
    // Not known to be exact, so refused: the caller parses and writes them with canonicalJson.
    const refused = ['{"a": 1.50}', '{"a": 0.1}', '{"a": -0.0}', '{"a": 1234567890123456}', '{"é": 1}', '{"a\\"b": 1}', '{"10": 1, "9": 2}', '{"k\\u0001": 1}'];
    for (const text of await printed(refused)) expect([text, written(text)]).toEqual([text, { ok: false, text: '' }]);
    // PostgreSQL prints an exponent or -0 as the integer it is, which the byte writer takes.
    expect((await printed(['{"a": 1e3, "b": -0}'])).map(written)).toEqual([{ ok: true, text: '{"a":1000,"b":0}' }]);
  });
});

describe('canonicalEvents', () => {
  let rows: RawRow[];
  let decoded: Array<{ seq: number; kind: string; ts: string; market: string | null; party: string | null; payload: Record<string, unknown> }>;
  beforeAll(async () => {
    const payloads: Array<Record<string, unknown>> = [
      { orderId: 'o-1', side: 'buy', size: '0.01', price: '60000', clientOrderId: null, reduceOnly: false },
      { legs: [{ party: 'p::1', fee: '0.29', role: 'taker' }, { party: 'p::2', fee: '0', role: 'maker' }], matchId: 'm-1' },
      { amount: 1.5, note: 'fraction: the JS path', weird: { é: 1 } },
      {},
    ];
    const times = ['2026-12-02 13:31:54.073+00', '2026-12-02 13:31:54+00', '2026-12-02 13:31:54.1+00', '2026-12-02 13:31:54.123456+00', '2026-12-02 14:31:54.5+01'];
    let seq = 0;
    for (const ts of times) {
      for (const payload of payloads) {
        seq++;
        const market = seq % 3 === 0 ? null : seq % 3 === 1 ? 'BTC-PERP' : '';
        const party = seq % 2 === 0 ? null : `trader "${seq}"::x`;
        await db.sql`INSERT INTO events (seq, kind, ts, market, party, payload) VALUES (${seq}, ${'engine.order_placed'}, ${ts}, ${market}, ${party}, ${db.sql.json(payload as never)})`;
      }
    }
    // As the gateway's connections read (UTC, ISO dates); another zone takes writeTime's slow path.
    const gatewayLike = postgres(db.url, { max: 1, onnotice: () => {}, connection: { TimeZone: 'UTC', DateStyle: 'ISO, MDY' } });
    const other = postgres(db.url, { max: 1, onnotice: () => {}, connection: { TimeZone: 'Asia/Kolkata' } });
    try {
      const select = `SELECT ${EVENT_TEXT_COLUMNS.join(', ')} FROM events ORDER BY seq`;
      rows = [...((await gatewayLike.unsafe(select).raw()) as unknown as RawRow[]), ...((await other.unsafe(select).raw()) as unknown as RawRow[])];
      const objects = await db.sql<typeof decoded>`SELECT seq::int AS seq, kind, ts, market, party, payload FROM events ORDER BY seq`;
      decoded = [...objects, ...objects].map((r) => ({ ...r, ts: new Date(r.ts).toISOString() }));
    } finally {
      await gatewayLike.end();
      await other.end();
    }
  });

  it("writes each row as leafText writes its envelope (a NULL market or party left out), 0x00 before each (the leaf's input), then joined by commas", () => {
    const events = canonicalEvents(rows);
    expect(events.count).toBe(decoded.length);
    const expected = decoded.map((e) => leafText({ seq: e.seq, kind: e.kind, ts: e.ts, ...(e.market !== null ? { market: e.market } : {}), ...(e.party !== null ? { party: e.party } : {}), payload: e.payload }));
    expected.forEach((text, i) => {
      expect([i, events.text(i).toString('utf8')]).toEqual([i, text]);
      expect(events.leafInput(i).equals(Buffer.from(`\u0000${text}`, 'utf8'))).toBe(true);
    });
    // The leaf a client computes from the text it receives is the hash of the input laid out in place.
    const leaf = (t: string) => createHash('sha256').update(Buffer.from([0])).update(t, 'utf8').digest('hex');
    expect(createHash('sha256').update(events.leafInput(1)).digest('hex')).toBe(leaf(expected[1]!));
    // Joined: the members of the answer's events array, each text as it was; the leaf inputs are gone.
    expect(JSON.parse(`[${events.joined().toString('utf8')}]`)).toEqual(expected.map((t) => JSON.parse(t)));
    expect(events.joined().toString('utf8')).toBe(expected.join(','));
    expect(() => events.leafInput(0)).toThrow(/gone/);
  });

  it('no rows, no texts', () => {
    const none = canonicalEvents([]);
    expect([none.count, none.joined().length]).toEqual([0, 0]);
  });
});
