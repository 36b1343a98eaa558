// Mirror events, oldest first, for backfill after a stream reconnect (docs/stream.md "Replay and reconnect").
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, List, READ_ERRORS } from '../schemas.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { EVENT_KINDS, listEventsJson } from '../../db/queries/events.js';
import { EventEnvelope, OptLimit, DEFAULT_LIMIT, Market, Party, Since, StringEnum } from './shapes.js';

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listEvents: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listEventsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listEventsJson(sql, f, db.rows))),
  };

  app.get(
    '/v1/events',
    {
      schema: {
        operationId: 'listEvents',
        security: [],
        tags: ['events'],
        summary: 'Mirror events after a seq, oldest first',
        description:
          'Each item is the engine envelope `{seq, kind, ts, market?, party?, payload}` (null market/party omitted). ' +
          'Pass the last processed seq as `since`, then keep passing `nextCursor` until it is null. ' +
          '`user=P` returns the events whose `party` is P and the `engine.order_filled` events in which P has a leg ' +
          '(a fill event has no top-level `party`; its parties are in `payload.legs`), each once.',
        querystring: Type.Object({
          since: Type.Optional(Since),
          type: Type.Optional(StringEnum(EVENT_KINDS, 'Only events of this kind')),
          user: Type.Optional({ ...Party, description: "Only this party's events, including the fill events it has a leg in" }),
          market: Type.Optional(Market),
          limit: OptLimit,
        }),
        response: { 200: List(EventEnvelope, 'pass back as `since`'), ...errors(...READ_ERRORS) },
      },
    },
    async (request, reply) => {
      const { since, type, user, market, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listEvents({ since, kind: type, party: user, market, limit }));
    },
  );
};
