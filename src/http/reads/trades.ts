// Public trades: one record per match (docs/rest.md "Trades"), newest first, from the mirror's
// taker legs through its (market, seq desc) index — never a whole-table scan, so `market` is required.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, READ_ERRORS } from '../schemas.js';
import { EMPTY_PAGE } from '../../db/queries/page.js';
import { listTrades } from '../../db/queries/trades.js';
import { Before, OptLimit, DEFAULT_LIMIT, Market, NewestFirst } from './shapes.js';
import { Decimal, Seq, Timestamp } from '../schemas.js';

export const Trade = Type.Object(
  {
    seq: { ...Seq, description: 'Seq of the engine.order_filled event (one per match)' },
    matchId: Type.String(),
    market: Market,
    // A plain string enum, not a union of literals: the serializer validates a union's branches, so a
    // mirror row outside the contract (another spelling) would make the whole page a 500. It is
    // written as recorded, as every list read writes its rows.
    side: Type.Unsafe<'buy' | 'sell'>({ type: 'string', enum: ['buy', 'sell'], description: 'Taker side (written as the mirror recorded it)' }),
    price: Decimal,
    size: { ...Decimal, description: 'Match size (a taker flipping through zero is still one trade)' },
    createdAt: { ...Timestamp, description: 'Engine time of the match' },
  },
  { additionalProperties: false },
);

export const tradeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  app.get(
    '/v1/trades',
    {
      schema: {
        operationId: 'listTrades',
        security: [],
        tags: ['mirror'],
        summary: 'Public trades of one market (one item per match, taker side), newest first',
        querystring: Type.Object({ market: Market, before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(Trade), ...errors(...READ_ERRORS) },
      },
    },
    async (request) => {
      const { market, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listTrades(sql, { market, before, limit }));
    },
  );
};
