// Verifications (audit): the engine's commitment claims checked against what the chain recorded.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, List, READ_ERRORS } from '../schemas.js';
import { EMPTY_PAGE } from '../../db/queries/page.js';
import { SCAN_WINDOW, VERIFICATION_STATUSES, verifyManifests, verifyUserBatches } from '../../db/queries/verifications.js';
import { Before, OptLimit, DEFAULT_LIMIT, ManifestVerification, Party, StringEnum, UserBatchVerification } from './shapes.js';

const Status = StringEnum(VERIFICATION_STATUSES, 'match (roots equal), mismatch (roots differ), pending (claim not on chain yet)');
const HOW =
  'Each engine claim (an event) joined with the chain record of the same key; newest claim first by engineSeq ' +
  '(the claim event seq, also the cursor). committedAt and chainRoot are null while pending. With a `status` filter ' +
  `one request examines at most ${SCAN_WINDOW} claims: a page can then hold fewer than \`limit\` items (even none) ` +
  'with a non-null `nextCursor`; keep following `nextCursor` until it is null.';

export const verificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.get(
    '/v1/verifications/user-batches',
    {
      schema: {
        operationId: 'verifyUserBatches',
        security: [],
        tags: ['verifications'],
        summary: 'Engine user-batch roots (engine.user_batch_committed) against user_batches on chain',
        description: HOW,
        querystring: Type.Object({ status: Type.Optional(Status), user: Type.Optional(Party), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: List(UserBatchVerification, 'pass back as `before` (an engineSeq)'), ...errors(...READ_ERRORS) },
      },
    },
    async (request) => {
      const { status, user, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => verifyUserBatches(sql, { status, party: user, before, limit }));
    },
  );

  app.get(
    '/v1/verifications/manifests',
    {
      schema: {
        operationId: 'verifyManifests',
        security: [],
        tags: ['verifications'],
        summary: 'Engine manifest roots (outbound.batch_committed) against batches on chain; any mismatch is an incident',
        description: HOW,
        querystring: Type.Object({ status: Type.Optional(Status), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: List(ManifestVerification, 'pass back as `before` (an engineSeq)'), ...errors(...READ_ERRORS) },
      },
    },
    async (request) => {
      const { status, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => verifyManifests(sql, { status, before, limit }));
    },
  );
};
