// Fills (engine mirror): one item per leg; the legs of one fill event are never split across pages.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams, READ_ERRORS } from '../schemas.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { listFillsJson } from '../../db/queries/fills.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { Before, Fill, OptLimit, DEFAULT_LIMIT, Market, NewestFirst, Party } from './shapes.js';

export const fillRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listFills: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listFillsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listFillsJson(sql, f, db.rows))),
  };

  app.get(
    '/v1/fills',
    {
      schema: {
        operationId: 'listFills',
        security: [],
        tags: ['mirror'],
        summary: 'Fills (one item per leg), newest event first',
        querystring: Type.Object({ user: Type.Optional(Party), market: Type.Optional(Market), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(Fill), ...errors(...READ_ERRORS) },
      },
    },
    async (request, reply) => {
      const { user, market, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listFills({ party: user, market, before, limit }));
    },
  );
};

/** The party routes of this family: registered in the party scope (http/party-scope.ts), which guards them. */
export const userFillRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listFills: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listFillsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listFillsJson(sql, f, db.rows))),
  };

  app.get(
    '/v1/users/:party/fills',
    {
      schema: {
        operationId: 'listUserFills',
        tags: ['mirror'],
        summary: "One party's fill legs, newest event first",
        params: PartyParams,
        querystring: Type.Object({ market: Type.Optional(Market), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(Fill), ...errors(400, 401, 403, 503) },
      },
    },
    async (request, reply) => {
      const { market, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listFills({ party: request.params.party, market, before, limit }));
    },
  );
};
