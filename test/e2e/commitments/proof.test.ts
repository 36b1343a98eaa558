// GET /v1/users/:party/user-batches/:userSeq/proof over a history traded on the reference engine
// and recorded by the reference indexer, whose chain is told to record one wrong user root
// (INDEXER_CORRUPT_USER_BATCH) and one wrong manifest root (INDEXER_CORRUPT_BATCH). Each proof is
// checked with the independent verifier (test/support/independent-verifier.ts), not the gateway's code.
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testGateway, testRecordedChain } from '../../support/stacks.js';
import type { RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import type { TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { canonical, leafOf, treeRoot, type Envelope } from '../../support/independent-verifier.js';
import { fundedClient } from '../../sandbox/engine/helpers.js';
import { VirtualClock } from '../../support/virtual-clock.js';
import { PROOF_CACHE_TTL_MS } from '../../../src/http/reads/proofs.js';

interface Proof {
  party: string;
  userSeq: number;
  status: string;
  reason?: string;
  events: Envelope[];
  chain: { userRoot: string; prevRoot: string; eventCount: number; batchNum: number | null; txId: string | null; committedAt: string | null; manifestRoot: string | null } | null;
  path: Array<{ side: 'left' | 'right'; hash: string }>;
}

const sha = (...b: Buffer[]) => createHash('sha256').update(Buffer.concat(b)).digest();

/** The auditor's own check of a proof: events → user root, path → manifest root. */
function audit(proof: Proof): { userRootOk: boolean; manifestOk: boolean } {
  const root = treeRoot(proof.events.map((e) => leafOf(Buffer.from(canonical(e), 'utf8'))));
  let acc = leafOf(Buffer.from(proof.chain!.userRoot, 'hex'));
  for (const s of proof.path) acc = s.side === 'left' ? sha(Buffer.from([1]), Buffer.from(s.hash, 'hex'), acc) : sha(Buffer.from([1]), acc, Buffer.from(s.hash, 'hex'));
  return { userRootOk: root === proof.chain!.userRoot, manifestOk: acc.toString('hex') === proof.chain!.manifestRoot };
}

describe('user batch proofs', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let indexer: RunningIndexer;
  let gateway: TestGateway;
  const ids: string[] = [];

  const stacks = fileScope();
  beforeAll(async () => {
    // Manifest 1: three user batches (ann, ben, cat); the 2nd user batch recorded wrong. Manifest 3 recorded wrong.
    ({ engine, db, indexer } = await testRecordedChain(stacks, { corruptUserBatch: 2, corruptBatch: 3 }));
    const clients = await Promise.all(['ann', 'ben', 'cat'].map((h) => fundedClient(engine.url, engine.adminToken, '100000', h)));
    ids.push(...clients.map((c) => c.id));
    const [ann, ben, cat] = clients as [typeof clients[0], typeof clients[0], typeof clients[0]];
    const book = { market: 'BTC-PERP', type: 'limit' } as const;
    engine.engine.commit(); // manifest 1
    await ben.placeOrder({ ...book, side: 'sell', price: '60000', size: '0.5' });
    await ann.placeOrder({ ...book, side: 'buy', price: '60000', size: '0.5' });
    engine.engine.commit(); // manifest 2
    await cat.placeOrder({ ...book, side: 'buy', price: '61000', size: '0.8' });
    await ann.placeOrder({ ...book, side: 'sell', price: '61000', size: '0.8' });
    engine.engine.commit(); // manifest 3 (recorded wrong)
    for (let i = 0; i < 30; i++) await ben.placeOrder({ ...book, side: 'sell', price: String(70000 + i), size: '0.01' });
    engine.engine.commit(); // manifest 4: ben alone, 60+ events
    await ann.placeOrder({ ...book, side: 'buy', price: '50000', size: '0.01' });
    // Claimed by the engine; the indexer has not recorded it on chain until its manifest arrives:
    // stop the chain here by committing after the indexer's catch-up is awaited below.
    await indexer.waitFor(engine.engine.log.maxSeq);
    gateway = await testGateway(stacks, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
  }, 60_000);

  const get = (party: string, userSeq: number | string) => gateway.app.inject({ method: 'GET', url: `/v1/users/${party}/user-batches/${userSeq}/proof` });

  it('verified: the events are the party batch exactly as streamed, and they and the path check out independently', async () => {
    const [ann] = ids as [string];
    const res = await get(ann, 2);
    expect(res.statusCode).toBe(200);
    const proof = res.json() as Proof;
    expect(proof).toMatchObject({ party: ann, userSeq: 2, status: 'verified', chain: { batchNum: 2 } });
    expect(proof.reason).toBeUndefined();
    // The events are those of /v1/events?user=ann between her claims 1 and 2, including the fill.
    const stream = (await gateway.app.inject(`/v1/events?user=${ann}&limit=1000`)).json().items as Envelope[];
    const claims = stream.filter((e) => e.kind === 'engine.user_batch_committed');
    expect(proof.events).toEqual(stream.filter((e) => e.seq > claims[0]!.seq && e.seq < claims[1]!.seq));
    expect(proof.events.some((e) => e.kind === 'engine.order_filled')).toBe(true);
    expect(proof.chain!.eventCount).toBe(proof.events.length);
    expect(audit(proof)).toEqual({ userRootOk: true, manifestOk: true });
    expect(proof.path.length).toBeGreaterThan(0);
    expect(proof.chain!.txId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a verified answer is kept (ADR 0063): the same bytes again; a changed chain record is seen at once, the mirror within the TTL', async () => {
    const [ann] = ids as [string];
    const first = await get(ann, 2);
    const again = await get(ann, 2);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.body).toBe(first.body);
    const [row] = await db.sql<Array<{ root: string }>>`SELECT root FROM user_batches WHERE party = ${ann} AND user_seq = 2`;
    try {
      // The chain's record changed under a kept answer: it is not used, the proof is made again.
      await db.sql`UPDATE user_batches SET root = ${'e'.repeat(64)} WHERE party = ${ann} AND user_seq = 2`;
      const changed = (await get(ann, 2)).json() as Proof;
      expect(changed).toMatchObject({ status: 'mismatch', reason: 'events', chain: { userRoot: 'e'.repeat(64) } });
    } finally {
      await db.sql`UPDATE user_batches SET root = ${row!.root} WHERE party = ${ann} AND user_seq = 2`;
    }
    expect((await get(ann, 2)).body).toBe(first.body);
  });

  it('a kept answer lives PROOF_CACHE_TTL_MS (an hour, ADR 0360): an event altered in the mirror shows after it, not after a minute', async (ctx) => {
    const [ann] = ids as [string];
    const clock = new VirtualClock();
    const timed = await testGateway(ctx, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' }, { overrides: { clock } });
    const one = (url: string) => timed.app.inject(url);
    const single = `/v1/users/${ann}/user-batches/2/proof`;
    const list = `/v1/users/${ann}/user-batches/proofs?since=1&limit=1`;
    const first = await one(single);
    const page = await one(list);
    const proof = first.json() as Proof;
    expect(proof.status).toBe('verified');
    const seq = proof.events[0]!.seq;
    await db.sql`UPDATE events SET payload = payload || '{"altered":1}'::jsonb WHERE seq = ${seq}`;
    try {
      await clock.advance(10 * 60_000);
      expect((await one(single)).body).toBe(first.body);
      expect((await one(list)).body).toBe(page.body);
      await clock.advance(PROOF_CACHE_TTL_MS - 10 * 60_000);
      expect((await one(single)).json()).toMatchObject({ status: 'mismatch', reason: 'events' });
      expect((await one(list)).json()).toMatchObject({ items: [{ userSeq: 2, status: 'mismatch', reason: 'events' }] });
    } finally {
      await db.sql`UPDATE events SET payload = payload - 'altered' WHERE seq = ${seq}`;
    }
    expect((await one(single)).body).toBe(first.body);
  });

  it('every user batch of every party: the status agrees with the independent check', async () => {
    const seen: string[] = [];
    for (const party of ids) {
      for (let userSeq = 1; ; userSeq++) {
        const res = await get(party, userSeq);
        if (res.statusCode === 404) break;
        const proof = res.json() as Proof;
        if (proof.status === 'pending') {
          seen.push('pending');
          continue;
        }
        const a = audit(proof);
        const expected = !a.userRootOk ? 'mismatch:events' : !a.manifestOk ? 'mismatch:manifest' : 'verified';
        expect(`${proof.status}${proof.reason ? `:${proof.reason}` : ''}`).toBe(expected);
        seen.push(expected);
      }
    }
    // The corrupted user batch (the 2nd recorded, ben's first); the other two of manifest 1, whose path
    // holds that wrong root as a sibling, so it no longer folds to the chain's manifest root; and the
    // two of manifest 3, whose chain root is wrong.
    expect(seen.filter((s) => s === 'mismatch:events')).toHaveLength(1);
    expect(seen.filter((s) => s === 'mismatch:manifest')).toHaveLength(4);
    expect(seen.filter((s) => s === 'pending')).toHaveLength(0);
    expect(seen.filter((s) => s === 'verified')).toHaveLength(3); // manifests 2 (ann, ben) and 4 (ben)
  });

  const range = (party: string, query: string) => gateway.app.inject({ method: 'GET', url: `/v1/users/${party}/user-batches/proofs${query}` });
  /** Every page of the range route, `limit` batches a page: its items, each as text, and the pages' cursors. */
  async function pages(party: string, limit: number): Promise<{ items: string[]; cursors: Array<number | null> }> {
    const items: string[] = [];
    const cursors: Array<number | null> = [];
    for (let since = 0; ; ) {
      const res = await range(party, `?since=${since}&limit=${limit}`);
      expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'application/json; charset=utf-8']);
      const body = res.json() as { items: unknown[]; nextCursor: number | null };
      items.push(...body.items.map((p) => JSON.stringify(p)));
      cursors.push(body.nextCursor);
      if (body.nextCursor === null) return { items, cursors };
      since = body.nextCursor;
    }
  }
  /** Each item of the range is the single route's answer for that batch, in userSeq order, whatever the page size. */
  async function rangeEqualsSingles(party: string): Promise<number> {
    const recorded = (await gateway.app.inject(`/v1/users/${party}/user-batches?limit=1000`)).json().items as Array<{ userSeq: number }>;
    const singles: string[] = [];
    for (const b of recorded) singles.push(JSON.stringify((await get(party, b.userSeq)).json()));
    for (const limit of [1, 2, 100]) {
      const { items, cursors } = await pages(party, limit);
      expect(items).toEqual(singles);
      expect(cursors.at(-1)).toBeNull();
      expect(cursors.length).toBe(Math.max(1, Math.ceil(singles.length / limit)));
    }
    return singles.length;
  }

  it('the range route: each proof is the one the single route answers, verified, mismatch or kept alike, page by page', async (ctx) => {
    let batches = 0;
    for (const party of ids) batches += await rangeEqualsSingles(party);
    expect(batches).toBe(8);
    // From a cold cache too: the range's own answers, then the single route's kept ones are the same bytes.
    const [ann] = ids as [string];
    const fresh = await testGateway(ctx, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
    const text = (await fresh.app.inject(`/v1/users/${ann}/user-batches/proofs`)).body;
    const single = (await fresh.app.inject(`/v1/users/${ann}/user-batches/2/proof`)).body;
    expect(text).toContain(single);
    // Every page asked at once from a gateway that keeps none (a client fetching ahead): each the
    // same bytes as asked one at a time, its content-length the body's.
    const asked = ids.flatMap((party) => [0, 1, 2, 3].map((since) => `/v1/users/${party}/user-batches/proofs?since=${since}&limit=1`));
    const oneByOne: string[] = [];
    for (const url of asked) oneByOne.push((await gateway.app.inject(url)).body);
    // (PROOF_PAGES_PER_IP raised: all twelve in progress at once, built in the lane's fair order.)
    const ahead = await testGateway(ctx, { DATABASE_URL: db.url, AUTH_DISABLED: 'true', PROOF_PAGES_PER_IP: '100' });
    const atOnce = await Promise.all(asked.map((url) => ahead.app.inject(url)));
    expect(atOnce.map((r) => r.body)).toEqual(oneByOne);
    expect(atOnce.map((r) => Number(r.headers['content-length']))).toEqual(oneByOne.map((b) => Buffer.byteLength(b)));
    expect(oneByOne.filter((b) => b.includes('"userSeq"')).length).toBeGreaterThanOrEqual(8);
    // With the default bound (8 pages of one address in progress), the pages past it are refused
    // before anything is read, 429 budget_exhausted (proof_pages); the others are the same bytes.
    const bounded = await testGateway(ctx, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
    const burst = await Promise.all(asked.map((url) => bounded.app.inject(url)));
    const refused = burst.filter((r) => r.statusCode === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(burst.length - refused.length).toBeGreaterThanOrEqual(8);
    for (const r of refused) {
      expect(r.json()).toMatchObject({ code: 'budget_exhausted', budget: 'proof_pages', retryAfterS: 1 });
      expect(r.headers['retry-after']).toBe('1');
    }
    burst.forEach((r, i) => {
      if (r.statusCode !== 429) expect([r.statusCode, r.body]).toEqual([200, oneByOne[i]]);
    });
    // Asked again, one at a time once the others are answered: served.
    for (const [i, r] of burst.entries()) {
      if (r.statusCode === 429) expect((await bounded.app.inject(asked[i]!)).body).toBe(oneByOne[i]);
    }
    // No batch after the last: an empty page; an unknown party has none either.
    const last = (await pages(ann, 100)).items.length;
    expect((await range(ann, `?since=${last}`)).json()).toEqual({ items: [], nextCursor: null });
    expect((await range(`nobody::${'9'.repeat(64)}`, '')).json()).toEqual({ items: [], nextCursor: null });
  });

  it('the range route in gzip (ADR 0383): a client that takes it gets the same bytes, compressed, for verified and mismatch parts alike', async (ctx) => {
    // The raw bytes, decoded by zlib's strict gunzip (CRC-32 and length checked); over the network in verify-in-browser.test.ts.
    const fresh = await testGateway(ctx, { DATABASE_URL: db.url, AUTH_DISABLED: 'true', PROOF_BUILD_AHEAD: 'false' });
    for (const gw of [gateway, fresh]) {
      for (const party of ids) {
        for (const query of ['', '?since=1&limit=2', '?since=100']) {
          const url = `/v1/users/${party}/user-batches/proofs${query}`;
          const plain = await gw.app.inject(url);
          const zipped = await gw.app.inject({ url, headers: { 'accept-encoding': 'br;q=1, gzip;q=0.8' } });
          expect(plain.headers['content-encoding']).toBeUndefined();
          expect(zipped.headers['content-encoding']).toBe('gzip');
          expect(zipped.headers.vary).toBe('accept-encoding');
          expect(Number(zipped.headers['content-length'])).toBe(zipped.rawPayload.length);
          expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(plain.body);
          // gzip refused (q=0): plain.
          expect((await gw.app.inject({ url, headers: { 'accept-encoding': 'gzip;q=0' } })).body).toBe(plain.body);
        }
      }
    }
    // The pages above hold mismatch parts (the chain recorded ann's 2nd user batch and manifest 3 wrong): not kept, deflated when sent.
    const all = ids.map((party) => (gateway.app.inject(`/v1/users/${party}/user-batches/proofs`)));
    const bodies = (await Promise.all(all)).map((r) => r.body).join('');
    expect(bodies).toContain('"status":"mismatch"');
  });

  it('the range route refuses malformed input with a 400 and a code, and bounds its page', async () => {
    const [ann] = ids as [string];
    for (const bad of ['?limit=0', '?limit=101', '?limit=abc', '?limit=1.5', '?since=-1', '?since=01', '?since=1e3', '?since=', '?other=1']) {
      const res = await range(ann, bad);
      expect([bad, res.statusCode, res.json().code]).toEqual([bad, 400, 'bad_request']);
    }
    const badParty = await range('Ann::xyz', '');
    expect([badParty.statusCode, badParty.json().code]).toEqual([400, 'bad_request']);
  });

  it('mismatch events: the chain root the corrupt indexer wrote is not the root of the events', async () => {
    const sorted = [...ids].sort();
    const proof = (await get(sorted[1]!, 1)).json() as Proof;
    expect(proof).toMatchObject({ status: 'mismatch', reason: 'events' });
    expect(audit(proof).userRootOk).toBe(false);
  });

  it('pending: claimed by the engine, not on chain yet', async () => {
    const [ann] = ids as [string];
    engine.engine.commit(); // claims ann's last batch; the indexer records it with its manifest
    const claimSeq = engine.engine.log.maxSeq;
    // Before the indexer sees it the mirror has no claim: 404. Delete the manifest's chain row to get "pending".
    await indexer.waitFor(claimSeq);
    const last = (await gateway.app.inject(`/v1/users/${ann}/user-batches?limit=100`)).json().items.at(-1) as { userSeq: number; batchNum: number };
    await db.sql`DELETE FROM batches WHERE batch_num = ${last.batchNum}`;
    const proof = (await get(ann, last.userSeq)).json() as Proof;
    expect(proof).toMatchObject({ status: 'pending', chain: { batchNum: last.batchNum, manifestRoot: null }, path: [] });
    expect(proof.events.map((e) => e.kind)).toEqual(['inbound.order', 'engine.order_placed']);
    await db.sql`DELETE FROM user_batches WHERE party = ${ann} AND user_seq = ${last.userSeq}`;
    const unrecorded = (await get(ann, last.userSeq)).json() as Proof;
    expect(unrecorded).toMatchObject({ status: 'pending', chain: null, path: [] });
    expect(unrecorded.events).toEqual(proof.events);
    // The range lists what the chain recorded: the batch without a record is not in it.
    const listed = (await pages(ann, 100)).items.map((t) => (JSON.parse(t) as Proof).userSeq);
    expect(listed).toEqual(Array.from({ length: last.userSeq - 1 }, (_, i) => i + 1));
  });

  it('404 for an unknown batch; 400 with a code for every malformed input', async () => {
    const [ann] = ids as [string];
    const unknown = await get(ann, 999);
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'not_found']);
    for (const bad of ['0', '-1', '1.5', 'abc', '9007199254740992', '1e3', '']) {
      const res = await get(ann, bad);
      expect([bad, res.statusCode < 500 && res.statusCode >= 400, typeof res.json().code]).toEqual([bad, true, 'string']);
    }
    const badParty = await get('Ann::xyz', 1);
    expect([badParty.statusCode, badParty.json().code]).toEqual([400, 'bad_request']);
  });
});
