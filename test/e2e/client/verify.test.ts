// The client verifies by itself (packages/client/src/verify, WebCrypto SHA-256): over a seeded
// history served by a real gateway it agrees with the reference engine's commitment code (property
// test), reports the seed's one deliberate incident, and catches each tampering of a proof at the
// step that breaks: a digit of a fill's price, two events swapped, one missing, one extra, a wrong
// sibling in the path, a user root that is not under the manifest.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, verifyHistory, verifyUserBatch, userRootOf, type UserBatchProof } from '../../../packages/client/src/index.js';
import { userBatchRoot } from '../../../sandbox/engine/commitments.js';
import { seed, type SeedResult } from '../../../sandbox/seed/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testGateway } from '../../support/stacks.js';

let db: TestDatabase;
let gw: TestGateway;
let seeded: SeedResult;
let client: GatewayClient;
const batches: Array<{ party: string; userSeq: number; root: string; batchNum: number | null }> = [];

const file = fileScope();
beforeAll(async () => {
  db = await createTestDatabase();
  file.onTestFinished(() => db.drop());
  seeded = await seed(db.sql, { seed: 11, parties: 6, fills: 800, batchEvery: 120, copy: db.kind === 'postgres' });
  gw = await testGateway(file, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' }, { listen: true });
  client = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
  batches.push(...(await db.sql<typeof batches>`SELECT party, user_seq::int AS "userSeq", root, batch_num::int AS "batchNum" FROM user_batches ORDER BY batch_num, party`));
}, 120_000);

const proofOf = (b: { party: string; userSeq: number }) => client.getUserBatchProof(b.party, b.userSeq);
const isIncident = (b: { party: string; userSeq: number }) => b.party === seeded.mismatch!.party && b.userSeq === seeded.mismatch!.userSeq;
/** The other user batches of the incident's manifest: their path holds the wrong root as a sibling. */
const besideIncident = (b: { party: string; userSeq: number; batchNum: number | null }) => !isIncident(b) && b.batchNum === seeded.mismatch!.batchNum;

describe('verifyUserBatch', () => {
  it('agrees with the reference engine on every batch drawn (property): roots, and the verdict', async () => {
    expect(batches.length).toBeGreaterThan(30);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...batches), async (b) => {
        const proof = await proofOf(b);
        const mine = await userRootOf(proof.events);
        expect(mine).toBe(userBatchRoot(proof.events as never));
        const verdict = await verifyUserBatch(proof);
        if (isIncident(b)) {
          expect(verdict).toMatchObject({ status: 'failed', step: 'userRoot', expected: b.root, actual: mine, gatewayStatus: 'mismatch' });
        } else if (besideIncident(b)) {
          expect(mine).toBe(b.root);
          expect(verdict).toMatchObject({ status: 'failed', step: 'manifest', gatewayStatus: 'mismatch' });
        } else {
          expect(mine).toBe(b.root);
          expect(verdict).toMatchObject({ status: 'verified', userRoot: b.root, batchNum: b.batchNum, gatewayStatus: 'verified' });
        }
      }),
      { numRuns: 40 },
    );
  });

  it('agrees with the reference engine on arbitrary event lists (property)', async () => {
    const event = fc.record({
      kind: fc.constantFrom('engine.order_placed', 'inbound.deposit', 'session.authorized'),
      market: fc.option(fc.constantFrom('BTC-PERP', 'ETH-PERP'), { nil: undefined }),
      party: fc.constant('p::x'),
      payload: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }))),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 40 }), async (raw) => {
        const events = raw.map((e, i) => ({ seq: i + 1, ts: '2026-11-21T10:00:00.000Z', ...e, ...(e.market === undefined ? { market: undefined } : {}) }));
        const clean = events.map(({ market, ...rest }) => (market === undefined ? rest : { ...rest, market }));
        expect(await userRootOf(clean)).toBe(userBatchRoot(clean as never));
      }),
      { numRuns: 60 },
    );
  });

  describe('catches each tampering at its step', () => {
    let proof: UserBatchProof;
    beforeAll(async () => {
      // A verified batch with a fill, at least 3 events and a path.
      for (const b of batches) {
        if (isIncident(b) || besideIncident(b)) continue;
        const p = await proofOf(b);
        if (p.events.length >= 3 && p.path.length >= 2 && p.events.some((e) => e.kind === 'engine.order_filled')) {
          proof = p;
          break;
        }
      }
      expect((await verifyUserBatch(proof)).status).toBe('verified');
    });
    const tamper = (f: (p: UserBatchProof) => void) => {
      const p = structuredClone(proof);
      f(p);
      return verifyUserBatch(p);
    };

    it("one changed digit in a fill's price", async () => {
      const v = await tamper((p) => {
        const fill = p.events.find((e) => e.kind === 'engine.order_filled')!;
        const price = fill.payload.price as string;
        fill.payload.price = price.replace(/\d/, (d) => String((Number(d) + 1) % 10));
      });
      expect(v).toMatchObject({ status: 'failed', step: 'userRoot' });
    });
    it('two events swapped', async () => {
      const v = await tamper((p) => {
        [p.events[0], p.events[1]] = [p.events[1]!, p.events[0]!];
      });
      expect(v).toMatchObject({ status: 'failed', step: 'events' });
      // Swapped contents under the original seqs still fail at the root.
      const w = await tamper((p) => {
        const [a, b] = [p.events[0]!, p.events[1]!];
        p.events[0] = { ...b, seq: a.seq };
        p.events[1] = { ...a, seq: b.seq };
      });
      expect(w).toMatchObject({ status: 'failed', step: 'userRoot' });
    });
    it('one event missing', async () => {
      expect(await tamper((p) => p.events.splice(1, 1))).toMatchObject({ status: 'failed', step: 'eventCount' });
      // Missing, with the count adjusted to match: the root still fails.
      expect(await tamper((p) => { p.events.splice(1, 1); p.chain!.eventCount--; })).toMatchObject({ status: 'failed', step: 'userRoot' });
    });
    it('one extra event', async () => {
      const v = await tamper((p) => {
        const last = p.events.at(-1)!;
        p.events.push({ ...structuredClone(last), seq: last.seq + 1 });
        p.chain!.eventCount++;
      });
      expect(v).toMatchObject({ status: 'failed', step: 'userRoot' });
      // An event of another party is refused before any hashing.
      const other = await tamper((p) => p.events.push({ seq: p.events.at(-1)!.seq + 1, kind: 'inbound.deposit', ts: p.events[0]!.ts, party: 'mallory::' + 'a'.repeat(64), payload: {} }));
      expect(other).toMatchObject({ status: 'failed', step: 'events' });
    });
    it('a wrong sibling in the path', async () => {
      const v = await tamper((p) => {
        const h = p.path[0]!.hash;
        p.path[0]!.hash = (h[0] === 'a' ? 'b' : 'a') + h.slice(1);
      });
      expect(v).toMatchObject({ status: 'failed', step: 'manifest', expected: proof.chain!.manifestRoot });
      expect(await tamper((p) => (p.path[0]!.side = p.path[0]!.side === 'left' ? 'right' : 'left'))).toMatchObject({ status: 'failed', step: 'manifest' });
    });
    it('a user root that is not under the manifest', async () => {
      // Another batch's events and user root, presented under this batch's manifest and path.
      const foreign = await proofOf(batches.find((b) => b.batchNum !== proof.chain!.batchNum && !isIncident(b) && !besideIncident(b))!);
      const v = await tamper((p) => {
        p.party = foreign.party;
        p.events = foreign.events;
        p.chain!.userRoot = foreign.chain!.userRoot;
        p.chain!.eventCount = foreign.chain!.eventCount;
      });
      expect(v).toMatchObject({ status: 'failed', step: 'manifest' });
    });
    it('a malformed proof is a shape failure, never a throw', async () => {
      expect(await verifyUserBatch(null as never)).toMatchObject({ status: 'failed', step: 'shape' });
      expect(await tamper((p) => (p.path[0]!.hash = 'xyz'))).toMatchObject({ status: 'failed', step: 'shape' });
    });
  });
});

describe('verifyHistory', () => {
  it('fetches the proofs a page at a time (the range route), with the verdicts of one by one; a gateway without the route: one by one', async () => {
    const party = seeded.mismatch!.party;
    const elsewhere = new GatewayClient({ baseUrl: `${gw.url}/before-the-range-route`, retry: { retries: 0 } });
    const calls = { pages: 0, single: 0 };
    const counted = (pages: 'range' | 'none' | 'missing') => ({
      listUserBatches: (p: string, q: { since?: number; limit?: number }) => client.listUserBatches(p, q),
      getUserBatchProof: (p: string, s: number) => (calls.single++, client.getUserBatchProof(p, s)),
      ...(pages === 'none'
        ? {}
        : {
            listUserBatchProofs: async (p: string, q: { since?: number }) => {
              calls.pages++;
              // A gateway without the route answers 404 (here the real one, asked under a path it does not serve).
              return (pages === 'missing' ? elsewhere : client).listUserBatchProofs(p, { ...q, limit: 3 }); // small pages: several of them
            },
          }),
    });
    const one = await verifyHistory(counted('none'), party);
    expect([calls.pages, calls.single]).toEqual([0, one.batches]);
    calls.single = 0;
    const paged = await verifyHistory(counted('range'), party);
    expect([calls.pages, calls.single]).toEqual([Math.ceil(one.batches / 3), 0]);
    expect(paged.verdicts).toEqual(one.verdicts);
    expect({ ...paged, verdicts: [] }).toEqual({ ...one, verdicts: [] });
    calls.pages = 0;
    const fallback = await verifyHistory(counted('missing'), party);
    expect([calls.pages, calls.single]).toEqual([1, one.batches]);
    expect(fallback.verdicts).toEqual(one.verdicts);
  });

  it('a party with no batch yet is "empty", never "verified" (nothing was checked)', async () => {
    const nobody = `nobody::${'ab'.repeat(32)}`;
    const verdict = await client.verifyHistory(nobody);
    expect(verdict).toMatchObject({ status: 'empty', batches: 0, events: 0, verified: 0 });
  });
  it("walks every user batch of a party with progress, and names the incident's batch", async () => {
    const party = seeded.mismatch!.party;
    const progress: number[] = [];
    const verdict = await client.verifyHistory(party, { onProgress: (p) => progress.push(p.done) });
    const expected = batches.filter((b) => b.party === party).length;
    expect(verdict.batches).toBe(expected);
    expect(progress).toEqual(Array.from({ length: expected + 1 }, (_, i) => i));
    expect(verdict.failed).toBe(1);
    expect(verdict.status).toBe('failed');
    expect(verdict.verdicts.find((v) => v.status === 'failed')).toMatchObject({ userSeq: seeded.mismatch!.userSeq, step: 'userRoot' });
    expect(verdict.chainBreaks).toEqual([]);
    // Another party: only its batch beside the incident (same manifest) fails, at the manifest step.
    const other = seeded.parties.find((p) => p !== party)!;
    const ok = await client.verifyHistory(other);
    const beside = batches.filter((b) => b.party === other && besideIncident(b)).map((b) => b.userSeq);
    expect(ok.verdicts.filter((v) => v.status === 'failed').map((v) => [v.userSeq, v.status === 'failed' && v.step])).toEqual(beside.map((s) => [s, 'manifest']));
    expect(ok.verified).toBe(ok.batches - beside.length);
    expect(ok.chainBreaks).toEqual([]);
    expect(ok.events).toBeGreaterThan(0);
    expect(ok.eventBatches.size).toBe(ok.events);
  });
});
