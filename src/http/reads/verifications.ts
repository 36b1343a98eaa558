// Verifications (audit): the engine's commitment claims checked against what the chain recorded.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, List, READ_ERRORS } from '../schemas.js';
import { EMPTY_PAGE } from '../../db/queries/page.js';
import { VERIFICATION_STATUSES, verifyManifests, verifyUserBatches, type ManifestVerification as ManifestRow, type UserBatchVerification as UserBatchRow, type VerificationFilter } from '../../db/queries/verifications.js';
import { ClaimStatusIndex } from './claim-status-index.js';
import { sharedPages } from './shared-pages.js';
import { sendJson } from './json-reply.js';
import { JsonBody } from '../../db/json/json-body.js';
import { Before, OptLimit, DEFAULT_LIMIT, ManifestVerification, Party, StringEnum, UserBatchVerification } from './shapes.js';

const Status = StringEnum(VERIFICATION_STATUSES, 'match (roots equal), mismatch (roots differ), pending (claim not on chain yet)');
const HOW =
  'Each engine claim (an event) joined with the chain record of the same key; newest claim first by engineSeq ' +
  '(the claim event seq, also the cursor). committedAt and chainRoot are null while pending. With a `status` filter ' +
  'a page holds the next `limit` claims of that status (fewer only on the last page, whose `nextCursor` is null), ' +
  'however long the claim history; the status of each item is the database\'s at the time of the request.';

export const verificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Per-claim statuses kept by the gateway, so a status filter is one request (claim-status-index.ts).
  const userBatches = new ClaimStatusIndex('user-batches');
  const manifests = new ClaimStatusIndex('manifests');
  // Identical concurrent reads share one database read (shared-pages.ts).
  const pages = {
    // The body is written once per read (JSON.stringify, keys in the schema's order: the rows' column
    // order), so requests sharing a read share its bytes.
    userBatches: sharedPages(app.config.listSharedReads, async ({ status, ...f }: VerificationFilter) =>
      JsonBody.of(await db.read(EMPTY_PAGE, (sql) => (status ? userBatches.page<UserBatchRow>(sql, { status, ...f }) : verifyUserBatches(sql, f))))),
    manifests: sharedPages(app.config.listSharedReads, async ({ status, ...f }: Omit<VerificationFilter, 'party'>) =>
      JsonBody.of(await db.read(EMPTY_PAGE, (sql) => (status ? manifests.page<ManifestRow>(sql, { status, ...f }) : verifyManifests(sql, f))))),
  };

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
    async (request, reply) => {
      const { status, user, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.userBatches({ status, party: user, before, limit }));
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
    async (request, reply) => {
      const { status, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.manifests({ status, before, limit }));
    },
  );
};
