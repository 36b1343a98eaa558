// Batch manifests and user batches (on-chain projection).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { errors, List, MAX_SEQ, PartyParams, READ_ERRORS } from '../schemas.js';
import { EMPTY_PAGE } from '../../db/queries/page.js';
import { batchByNum, listBatches, listUserBatches, listUserBatchesOf, type BatchRow } from '../../db/queries/batches.js';
import { Batch, OptLimit, DEFAULT_LIMIT, PAGE_RULE, UserBatch } from './shapes.js';

const BatchNum = Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'Batch number' });

export const batchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.get(
    '/v1/batches',
    {
      schema: {
        operationId: 'listBatches',
        security: [],
        tags: ['batches'],
        summary: 'Batch manifests, newest first',
        description: 'Ordered by batchNum descending; the cursor is a batchNum.',
        querystring: Type.Object({
          before: Type.Optional({ ...BatchNum, description: 'Only batches with a smaller batchNum (take it from `nextCursor`)' }),
          limit: OptLimit,
        }),
        response: { 200: List(Batch, 'pass back as `before` (a batchNum)'), ...errors(...READ_ERRORS) },
      },
    },
    async (request) => {
      const { before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listBatches(sql, { before, limit }));
    },
  );

  app.get(
    '/v1/batches/:batchNum',
    {
      schema: {
        operationId: 'getBatch',
        security: [],
        tags: ['batches'],
        summary: 'One batch manifest',
        params: Type.Object({ batchNum: BatchNum }),
        response: { 200: Batch, ...errors(400, 404, 503) },
      },
    },
    async (request) => {
      const { batchNum } = request.params;
      const batch = await db.read<BatchRow | null>(null, (sql) => batchByNum(sql, batchNum));
      if (!batch) throw new ApiError('not_found', `no batch ${batchNum}`);
      return batch;
    },
  );

  app.get(
    '/v1/user-batches',
    {
      schema: {
        operationId: 'listUserBatches',
        security: [],
        tags: ['batches'],
        summary: 'All user batches, newest batch first',
        description:
          'Ordered by batchNum descending (then party, userSeq); the cursor is a batchNum. The user batches of one batch ' +
          'stay on one page, so a page may exceed `limit`. User batches the chain recorded but no manifest has claimed yet ' +
          '(batchNum null) are not listed here until a manifest claims them; they are in `/v1/users/{party}/user-batches`.',
        querystring: Type.Object({
          before: Type.Optional({ ...BatchNum, description: 'Only user batches of a smaller batchNum (take it from `nextCursor`)' }),
          limit: OptLimit,
        }),
        response: {
          200: { ...List(UserBatch, 'pass back as `before` (a batchNum)'), description: PAGE_RULE },
          ...errors(...READ_ERRORS),
        },
      },
    },
    async (request) => {
      const { before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listUserBatches(sql, { before, limit }));
    },
  );
};

/** The party routes of this family: registered in the party scope (http/party-scope.ts), which guards them. */
export const userBatchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.get(
    '/v1/users/:party/user-batches',
    {
      schema: {
        operationId: 'listUserBatchesOfUser',
        tags: ['batches'],
        summary: "One party's chain of user batches, oldest first",
        description: 'Ordered by userSeq ascending; the cursor is a userSeq passed back as `since`.',
        params: PartyParams,
        querystring: Type.Object({
          since: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'Only user batches with a greater userSeq' })),
          limit: OptLimit,
        }),
        response: { 200: List(UserBatch, 'pass back as `since` (a userSeq)'), ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { since, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listUserBatchesOf(sql, { party: request.params.party, since, limit }));
    },
  );
};
