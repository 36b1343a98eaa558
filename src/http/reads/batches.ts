// Batch manifests and user batches (on-chain projection).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { errors, List, MAX_SEQ, PartyParams, READ_ERRORS } from '../schemas.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { batchByNum, listBatchesJson, listUserBatchesJson, listUserBatchesOfJson, type BatchRow } from '../../db/queries/batches.js';
import { Batch, OptLimit, DEFAULT_LIMIT, PAGE_RULE, UserBatch } from './shapes.js';

const BatchNum = Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'Batch number' });

export const batchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listBatches: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listBatchesJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listBatchesJson(sql, f))),
    listUserBatches: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listUserBatchesJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listUserBatchesJson(sql, f))),
  };

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
    async (request, reply) => {
      const { before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listBatches({ before, limit }));
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
    async (request, reply) => {
      const { before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listUserBatches({ before, limit }));
    },
  );
};

/** The party routes of this family: registered in the party scope (http/party-scope.ts), which guards them. */
export const userBatchRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listUserBatchesOf: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listUserBatchesOfJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listUserBatchesOfJson(sql, f))),
  };

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
    async (request, reply) => {
      const { since, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listUserBatchesOf({ party: request.params.party, since, limit }));
    },
  );
};
