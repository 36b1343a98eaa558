// The proof of one user batch (docs/verification.md): the events, the chain's record, the path.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { errors, List, MAX_SEQ, Party, NullableTimestamp } from '../schemas.js';
import { buildProof, readProofInputs, readRecord, readRecords, type ProofInputs, type UserBatchProof } from '../../commitments/proof.js';
import type { RecordedUserBatch } from '../../db/queries/commitments.js';
import { answerCache, ProofPages, type KeptAnswer } from './proof-pages.js';
import { acceptsGzip, deflatePart, gzipOf } from './gzip-parts.js';
import { ProofWarmer, startEventsFor } from './proof-warmer.js';
import { EventEnvelope } from './shapes.js';
import type { FastifyReply } from 'fastify';
import { Readable } from 'node:stream';
import type { Flow } from '../../fair-share.js';
import { BuildLane } from './proof-build-lane.js';
import { addressGroup } from '../../client-address.js';
import { scrapedCounter } from '../../metrics.js';

function sendBytes(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(bytes);
}

const ITEMS = deflatePart(Buffer.from('{"items":['));
const COMMA = deflatePart(Buffer.from(','));

/**
 * Sends the bytes of `parts` one after the other, as one body of their total length (the same bytes
 * and headers as sendBytes of their concatenation): a page of proofs is some 7 MB of answers, most of
 * them kept by the cache, and copying them into one buffer per request (fresh memory each time) cost
 * about as much as a kept page's whole answer.
 */
function sendParts(reply: FastifyReply, parts: readonly Buffer[]): FastifyReply {
  let length = 0;
  for (const part of parts) length += part.length;
  return reply.type('application/json; charset=utf-8').header('content-length', String(length)).send(Readable.from(parts, { objectMode: false }));
}

/**
 * A page's parts as one body: gzip of the parts deflated once (ADR 0383) for a client that takes it
 * (a browser always does: 66 MB of answers are 5.2 MB on the wire), else their plain bytes. A part
 * not kept (a mismatch, a pending batch) is deflated here.
 */
function sendPage(reply: FastifyReply, parts: readonly KeptAnswer[], gzip: boolean): FastifyReply {
  reply.header('vary', 'accept-encoding');
  if (!gzip) return sendParts(reply, parts.map((p) => p.plain));
  reply.header('content-encoding', 'gzip');
  return sendParts(reply, gzipOf(parts.map((p) => (p.deflated.length > 0 || p.plain.length === 0 ? p : deflatePart(p.plain)))));
}

const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: '32-byte SHA-256 hash as 64 lower-case hex characters' });
/** A root as the chain recorded it: written as read, so a malformed one is shown, not refused (the status says `mismatch`, reason `record`). */
const RecordedHash = Type.String({
  description: "32-byte SHA-256 hash as 64 lower-case hex characters, as the chain recorded it; anything else makes the status `mismatch` with reason `record`",
});

export const UserBatchProofBody = Type.Object(
  {
    party: Party,
    userSeq: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal('verified'), Type.Literal('mismatch'), Type.Literal('pending')], {
      description:
        "The gateway's own check (a convenience; verify it yourself): `verified` = the events hash to the chain's user root and that " +
        "root sits under the chain's manifest root; `mismatch` = one of the two fails (see `reason`); `pending` = not on chain yet",
    }),
    reason: Type.Optional(
      Type.Union([Type.Literal('events'), Type.Literal('manifest'), Type.Literal('record')], {
        description:
          "With `mismatch`: `events` = the events do not hash to the chain's user root; `manifest` = the user root is not under the manifest root; " +
          "`record` = the chain's record is not well formed (a root that is not 64 lower-case hex characters, a negative event count: see `problem`), so it proves nothing",
      }),
    ),
    problem: Type.Optional(Type.String({ description: "With reason `record`: what in the chain's record the contract does not allow" })),
    events: Type.Array(EventEnvelope, { description: "The batch's event envelopes from the mirror, in seq order, exactly as streamed (the leaves of the user root)" }),
    chain: Type.Union(
      [
        Type.Object({
          userRoot: RecordedHash,
          prevRoot: RecordedHash,
          eventCount: Type.Integer(),
          batchNum: Type.Union([Type.Integer(), Type.Null()], { description: 'The manifest that claimed it; null until one has' }),
          txId: Type.Union([Type.String(), Type.Null()]),
          committedAt: NullableTimestamp,
          manifestRoot: Type.Union([RecordedHash, Type.Null()], { description: "The chain's root of that manifest; null until recorded" }),
        }),
        Type.Null(),
      ],
      { description: 'What the chain recorded (tables user_batches and batches); null while the chain has no record of this batch' },
    ),
    path: Type.Array(
      Type.Object({
        side: Type.Union([Type.Literal('left'), Type.Literal('right')], { description: 'The side the sibling sits on' }),
        hash: Hash,
      }),
      {
        description:
          "Sibling hashes from the user root's leaf sha256(0x00 ‖ userRoot) up to the manifest root; a level where the node is unpaired has no step. Empty while pending",
      },
    ),
  },
  { description: 'Everything needed to check one user batch against the chain (docs/verification.md)' },
);

/** Most user batches in one page of proofs, and the events past which a page ends (by the chain's counts; one batch at least). */
export const MAX_PROOF_PAGE = 100;
export const PROOF_PAGE_EVENTS = 10_000;

/**
 * How long an event of the mirror altered after a verified answer can go unseen by this route (ADR
 * 0360; was 60 s, ADR 0063). A kept answer is one whose events hashed to the chain's root under a
 * record checked again on every request, so keeping it longer hides only a mirror changed since
 * (which a client's check of that answer cannot see either: its events are the committed ones); a
 * whole history verified again within the hour is served without rebuilding a page.
 */
export const PROOF_CACHE_TTL_MS = 60 * 60_000;

/** How often the warmer looks for manifests the chain recorded (PROOF_BUILD_AHEAD, ADR 0382). */
const WARM_PERIOD_MS = 1_000;

export const proofRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // The kept answers (PROOF_CACHE_BYTES, ADR 0063, ADR 0300, ADR 0382): a whole history of 100 000
  // events is about 66 MB of answers, served again from here when it is verified again.
  const cache = answerCache({ maxBytes: app.config.proofCacheBytes, ttlMs: PROOF_CACHE_TTL_MS, clock: app.clock });
  const builds = new BuildLane(app.config.proofPagesPerIp);
  const pages = new ProofPages(cache, builds, UserBatchProofBody);
  if (app.config.proofBuildAhead && db.configured) {
    const warmer = new ProofWarmer({ db, pages, clock: app.clock, logger: app.log, periodMs: WARM_PERIOD_MS, startEvents: startEventsFor(app.config.proofCacheBytes) });
    scrapedCounter(app.metrics.registry, 'bff_proofs_built_ahead_total', 'Proofs of user batches built and kept before any client asked (PROOF_BUILD_AHEAD, ADR 0382)', () => warmer.built);
    scrapedCounter(app.metrics.registry, 'bff_proofs_build_ahead_failures_total', 'Turns of building proofs ahead that failed (the database unreachable); each is tried again a second later from where it was', () => warmer.failures);
    app.addHook('onReady', async () => warmer.start());
    app.addHook('onClose', async () => warmer.stop());
  }

  app.get(
    '/v1/users/:party/user-batches/:userSeq/proof',
    {
      schema: {
        operationId: 'getUserBatchProof',
        tags: ['batches'],
        summary: 'Proof of one user batch: its events, the chain record, the path to the manifest root',
        description:
          'Recompute the user root from `events` (leaf = sha256(0x00 ‖ canonical JSON of the envelope), node = sha256(0x01 ‖ left ‖ right), ' +
          'an unpaired last node moves up unchanged), compare it with `chain.userRoot`, then fold `path` from sha256(0x00 ‖ userRoot) and ' +
          'compare with `chain.manifestRoot`. 404 `not_found` when neither the chain nor the engine claimed this batch.',
        params: Type.Object({ party: Party, userSeq: Type.Integer({ minimum: 1, maximum: MAX_SEQ, description: "The party's user batch number (1, 2, …)" }) }),
        response: { 200: UserBatchProofBody, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { party, userSeq } = request.params;
      // One index read of the chain's record on every request; the events, the manifest's members
      // and the hashing only when no verified answer made from that same record is kept.
      const answer = await db.read<{ proof: UserBatchProof | null; record: RecordedUserBatch | null; cached: KeptAnswer | null }>(
        { proof: null, record: null, cached: null },
        async (sql) => {
          const record = await readRecord(sql, party, userSeq);
          const cached = pages.kept(party, record);
          if (cached) return { proof: null, record, cached };
          return { proof: await buildProof(sql, party, userSeq, record), record, cached: null };
        },
      );
      if (answer.cached) return sendBytes(reply, answer.cached.plain);
      if (!answer.proof) throw new ApiError('not_found', `no user batch ${userSeq} of ${party}`);
      // The bytes the range route writes for this batch too; a verified answer is kept.
      return sendBytes(reply, pages.write(answer.proof, answer.record));
    },
  );

  app.get(
    '/v1/users/:party/user-batches/proofs',
    {
      schema: {
        operationId: 'listUserBatchProofs',
        tags: ['batches'],
        summary: "Proofs of a range of a party's user batches, oldest first: what verifying a whole history fetches",
        description:
          'The user batches the chain recorded with a userSeq above `since`, ascending, each with the proof ' +
          '`GET /v1/users/{party}/user-batches/{userSeq}/proof` answers (the same object, status included): check each exactly as one. ' +
          `A page holds at most \`limit\` batches (1..${MAX_PROOF_PAGE}, default ${MAX_PROOF_PAGE}) and ends after the batch that brings its events ` +
          `(by the chain's counts) to ${PROOF_PAGE_EVENTS} or more, so one page is a few MB at most; \`nextCursor\` is the last userSeq ` +
          'when more batches are recorded, to pass back as `since`, else null. A batch the engine claimed that the chain has not recorded ' +
          'is not listed (its single proof route answers it `pending`). Pages the gateway has to build (no kept answer) are built one at a time, ' +
          'in a fair order between client addresses; past PROOF_PAGES_PER_IP pages of one address in progress, 429 `budget_exhausted` (`budget: "proof_pages"`, Retry-After 1 s), nothing read. ' +
          'Sent in gzip (`Content-Encoding: gzip`, each answer deflated once when made) to a client whose Accept-Encoding takes it; the same bytes once decoded.',
        params: Type.Object({ party: Party }),
        querystring: Type.Object({
          since: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'Only user batches with a greater userSeq (take it from `nextCursor`); default 0' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PROOF_PAGE, description: `Most user batches in the page, 1..${MAX_PROOF_PAGE}; default ${MAX_PROOF_PAGE}` })),
        }),
        response: { 200: List(UserBatchProofBody, 'pass back as `since` (a userSeq)'), ...errors(400, 401, 403, 429, 503) },
      },
    },
    async (request, reply) => {
      const { party } = request.params;
      const { since = 0, limit = MAX_PROOF_PAGE } = request.query;
      const address = addressGroup(request.ip);
      // Counted from before its reads to its answer: refused here, nothing read, past PROOF_PAGES_PER_IP.
      const release = builds.enter(address);
      try {
        return sendPage(reply, await pageOf({ address, party }, since, limit), acceptsGzip(request.headers['accept-encoding']));
      } finally {
        release();
      }
    },
  );

  /** A page of proofs: kept answers as they are, the others read, then built in the lane when their turn comes. */
  async function pageOf(flow: Flow & { party: string }, since: number, limit: number): Promise<KeptAnswer[]> {
    const { party } = flow;
    // The reads within the database's deadline; the hashing and writing after them.
    const page = await db.read<{ parts: Array<KeptAnswer | null>; inputs: ProofInputs | null; more: boolean; last: number | null }>(
      { parts: [], inputs: null, more: false, last: null },
      async (sql) => {
        const rows = await readRecords(sql, party, since, limit + 1);
        const records: RecordedUserBatch[] = [];
        let events = 0;
        for (const row of rows.slice(0, limit)) {
          if (records.length > 0 && events >= PROOF_PAGE_EVENTS) break;
          records.push(row);
          events += Math.max(0, row.eventCount);
        }
        const parts = records.map((r) => pages.kept(party, r));
        const inputs = await readProofInputs(sql, party, records.filter((_, i) => parts[i] === null));
        return { parts, inputs, more: rows.length > records.length, last: records.at(-1)?.userSeq ?? null };
      },
    );
    const inputs = page.inputs;
    if (inputs && inputs.batches.length > 0) {
      let next = 0;
      await pages.build(flow, inputs, (answer) => {
        while (page.parts[next] !== null) next++;
        page.parts[next++] = answer;
      });
    }
    const body: KeptAnswer[] = [ITEMS];
    page.parts.forEach((part, i) => {
      if (part === null) throw new Error(`no answer made for item ${i} of the page`);
      if (i > 0) body.push(COMMA);
      body.push(part);
    });
    body.push(deflatePart(Buffer.from(`],"nextCursor":${page.more && page.last !== null ? page.last : 'null'}}`)));
    return body;
  }
};
