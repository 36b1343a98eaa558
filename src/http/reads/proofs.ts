// The proof of one user batch (docs/verification.md): the events, the chain's record, the path.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { errors, MAX_SEQ, Party, NullableTimestamp } from '../schemas.js';
import { buildProof, readRecord, recordIdentity, type UserBatchProof } from '../../commitments/proof.js';
import { ProofCache } from '../../commitments/proof-cache.js';
import { EventEnvelope } from './shapes.js';
import type { FastifyReply } from 'fastify';

function sendBytes(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(bytes);
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

/** The cache of verified answers (ADR 0063): about 500 answers of a 100-event batch. */
const PROOF_CACHE_BYTES = 32 * 1024 * 1024;
/** How long an event of the mirror altered after a verified answer can go unseen by this route. */
const PROOF_CACHE_TTL_MS = 60_000;

export const proofRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  const cache = new ProofCache({ maxBytes: PROOF_CACHE_BYTES, ttlMs: PROOF_CACHE_TTL_MS, clock: app.clock });

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
      const key = `${party}\u0000${userSeq}`;
      // One index read of the chain's record on every request; the events, the manifest's members
      // and the hashing only when no verified answer made from that same record is kept.
      const answer = await db.read<{ proof: UserBatchProof | null; identity: string | null; cached: Buffer | null }>(
        { proof: null, identity: null, cached: null },
        async (sql) => {
          const record = await readRecord(sql, party, userSeq);
          const identity = recordIdentity(record);
          const cached = identity === null ? null : cache.get(key, identity);
          if (cached) return { proof: null, identity, cached };
          return { proof: await buildProof(sql, party, userSeq, record), identity, cached: null };
        },
      );
      if (answer.cached) return sendBytes(reply, answer.cached);
      const { proof, identity } = answer;
      if (!proof) throw new ApiError('not_found', `no user batch ${userSeq} of ${party}`);
      if (proof.status !== 'verified' || identity === null) return proof;
      // The same bytes the response schema's serializer writes, kept.
      const bytes = Buffer.from(reply.serialize(proof) as string, 'utf8');
      cache.set(key, identity, bytes);
      return sendBytes(reply, bytes);
    },
  );
};
