// Position epochs of one party (engine mirror). Clients key positions by positionId (an epoch).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams } from '../schemas.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { listPositionsJson, POSITION_STATUSES } from '../../db/queries/positions.js';
import { Before, OptLimit, DEFAULT_LIMIT, Market, NewestFirst, Position, StringEnum } from './shapes.js';

export const positionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listPositions: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listPositionsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listPositionsJson(sql, f))),
  };

  app.get(
    '/v1/users/:party/positions',
    {
      schema: {
        operationId: 'listUserPositions',
        tags: ['mirror'],
        summary: "One party's position epochs, most recently changed first",
        description:
          '`status=open` (default) lists open epochs, `closed` archived epochs (a flip archives one epoch and opens another ' +
          'under a new positionId), `all` both. Ordered by updatedSeq descending; the cursor is an updatedSeq. An open epoch ' +
          'that changes while a client pages moves to the front, so page from a snapshot or re-read from the start.',
        params: PartyParams,
        querystring: Type.Object({
          status: Type.Optional(StringEnum(POSITION_STATUSES, 'open (default), closed or all')),
          market: Type.Optional(Market),
          before: Type.Optional(Before),
          limit: OptLimit,
        }),
        response: { 200: NewestFirst(Position, 'updatedSeq'), ...errors(400, 401, 403, 503) },
      },
    },
    async (request, reply) => {
      const { status = 'open', market, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listPositions({ party: request.params.party, status, market, before, limit }));
    },
  );
};
