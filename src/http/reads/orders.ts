// Orders (engine mirror; needs indexer migration 0014). The party route merges the engine's live
// view of its open orders (live-orders.ts).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams, READ_ERRORS } from '../schemas.js';
import { EMPTY_PAGE, type Page } from '../../db/queries/page.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { existingOrderIds, listOrdersJson, listOrders, NON_TERMINAL, ORDER_STATUSES, type OrderRow, type OrderStatus } from '../../db/queries/orders.js';
import { fetchLiveOrders, LIVE_FAILURE_MESSAGE, mergeLive, mirrorOnly, type OrderItem } from './live-orders.js';
import { Before, OptLimit, DEFAULT_LIMIT, Market, NewestFirst, Order, Party, StringEnum, UserOrder } from './shapes.js';

const Status = StringEnum(ORDER_STATUSES, 'Only orders in this status');

/** The live read must not hold a page hostage to a slow engine: bounded below the engine timeout. */
export const LIVE_ORDERS_TIMEOUT_MS = 1_500;

export const orderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listOrders: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listOrdersJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listOrdersJson(sql, f), { needsV2: true })),
  };

  app.get(
    '/v1/orders',
    {
      schema: {
        operationId: 'listOrders',
        security: [],
        tags: ['mirror'],
        summary: 'Orders, newest first (mirror)',
        description: 'Ordered by createdSeq descending; the cursor is a createdSeq. 503 `schema_behind` when the indexer lacks 0014.',
        querystring: Type.Object({
          user: Type.Optional(Party),
          market: Type.Optional(Market),
          status: Type.Optional(Status),
          before: Type.Optional(Before),
          limit: OptLimit,
        }),
        response: { 200: NewestFirst(Order, 'createdSeq'), ...errors(...READ_ERRORS) },
      },
    },
    async (request, reply) => {
      const { user, market, status, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listOrders({ party: user, market, statuses: status ? [status] : undefined, before, limit }));
    },
  );
};

/** The party routes of this family: registered in the party scope (http/party-scope.ts), which guards them. */
export const userOrderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, engine, config } = app;

  app.get(
    '/v1/users/:party/orders',
    {
      schema: {
        operationId: 'listUserOrders',
        tags: ['mirror'],
        summary: "One party's orders, with its open orders as the engine sees them now",
        description:
          'Mirror rows, newest first by createdSeq (cursor: a createdSeq). Non-terminal rows are replaced by the engine\'s live ' +
          'view (`source: "engine"`); a row the mirror still has open but the engine no longer lists is omitted (it reappears ' +
          'with its final status once the mirror catches up), so a page can hold fewer than `limit` items; live orders the ' +
          'mirror has not recorded yet are added. If the live read fails (old engine, unreachable, timeout, no admin token) ' +
          'the mirror rows are served as they are (`source: "mirror"`), still 200. A terminal `status` filter skips the live read.',
        params: PartyParams,
        querystring: Type.Object({
          market: Type.Optional(Market),
          status: Type.Optional(Status),
          before: Type.Optional(Before),
          limit: OptLimit,
        }),
        response: { 200: NewestFirst(UserOrder, 'createdSeq'), ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { party } = request.params;
      const { market, status, before, limit = DEFAULT_LIMIT } = request.query;
      if (!db.configured) return EMPTY_PAGE;
      const wantsLive = status === undefined || NON_TERMINAL.includes(status);
      // A mirror row may be open while the engine has it partially filled: ask the mirror for both.
      const statuses: readonly OrderStatus[] | undefined = status === undefined ? undefined : wantsLive ? NON_TERMINAL : [status];
      const timeoutMs = Math.min(config.engineTimeoutMs, LIVE_ORDERS_TIMEOUT_MS);
      const [page, live] = await Promise.all([
        db.read<Page<OrderRow>>(EMPTY_PAGE, (sql) => listOrders(sql, { party, market, statuses, before, limit }), { needsV2: true }),
        wantsLive ? fetchLiveOrders(engine, party, market, timeoutMs) : null,
      ]);
      if (live === null) return mirrorOnly(page);
      if (!live.ok) {
        const { ok: _ok, ...why } = live;
        request.log.warn({ party, market: market ?? 'all', ...why }, LIVE_FAILURE_MESSAGE);
        const fallback = mirrorOnly(page);
        return status === undefined ? fallback : { ...fallback, items: fallback.items.filter((i: OrderItem) => i.status === status) };
      }
      if (live.unknownMarket) request.log.debug({ party, market }, 'ordersForUser: engine does not know this market; no live open orders');
      // Live orders not on this page may still be mirror rows of another page: those are not new.
      const onPage = new Set(page.items.map((r) => r.orderId));
      const unseen = live.orders.filter((o) => !onPage.has(o.orderId)).map((o) => o.orderId);
      const known = await db.read(new Set<string>(), (sql) => existingOrderIds(sql, unseen));
      return mergeLive(page, live.orders, { status, market, before, mirrorIds: known });
    },
  );
};
