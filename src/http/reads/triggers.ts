// Take-profit/stop-loss triggers of one party (engine mirror; needs indexer migrations 0014/0015).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams } from '../schemas.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { listTriggersJson, TRIGGER_STATUSES } from '../../db/queries/triggers.js';
import { Before, OptLimit, DEFAULT_LIMIT, Market, NewestFirst, StringEnum, Trigger } from './shapes.js';

export const triggerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listTriggers: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listTriggersJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listTriggersJson(sql, f), { needsV2: true })),
  };

  app.get(
    '/v1/users/:party/triggers',
    {
      schema: {
        operationId: 'listUserTriggers',
        tags: ['mirror'],
        summary: "One party's trigger lifecycle, newest first",
        description: 'Ordered by createdSeq descending; the cursor is a createdSeq. 503 `schema_behind` when the indexer lacks 0014/0015.',
        params: PartyParams,
        querystring: Type.Object({
          market: Type.Optional(Market),
          status: Type.Optional(StringEnum(TRIGGER_STATUSES, 'armed, cancelled or fired')),
          before: Type.Optional(Before),
          limit: OptLimit,
        }),
        response: { 200: NewestFirst(Trigger, 'createdSeq'), ...errors(400, 401, 403, 503) },
      },
    },
    async (request, reply) => {
      const { market, status, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listTriggers({ party: request.params.party, market, status, before, limit }));
    },
  );
};
