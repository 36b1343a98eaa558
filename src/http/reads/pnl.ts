// A trader's history (docs/rest.md "PnL history", "Trade history"): profit and loss over time —
// equity, realized and unrealized PnL, fees, cumulative — and the fill legs with their realized PnL
// and the running sums, what dYdX (historical-pnl, trade-history) and Hyperliquid (portfolio) give a
// screen. Both are read from the mirror, exactly (src/db/queries/pnl.ts, trade-history.ts,
// src/projections/pnl-history.ts); the PnL bucket holding the mirror's head equals the account view.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { Decimal, errors, PartyParams, Seq, Timestamp } from '../schemas.js';
import { loadPnlSource, PNL_MAX_LEGS, type PnlSource } from '../../db/queries/pnl.js';
import { listTradeHistory } from '../../db/queries/trade-history.js';
import { EMPTY_PAGE } from '../../db/queries/page.js';
import { pnlHistory } from '../../projections/pnl-history.js';
import { INTERVAL_MS, INTERVAL_ORIGIN_MS } from '../../projections/candles.js';
import { CANDLE_INTERVALS, type CandleInterval } from '../../contracts/frame.js';
import { Before, DEFAULT_LIMIT, Market, NewestFirst, OptLimit, StringEnum } from './shapes.js';

/** Points of one answer at most (a year of days, a month of hours at 1h is 720). */
export const PNL_MAX_POINTS = 1_000;

const Ms = (description: string) => Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description });

export const PnlPoint = Type.Object(
  {
    ts: { ...Timestamp, description: 'Bucket start (engine time, UTC-aligned)' },
    collateral: { ...Decimal, description: "The engine's cash collateral at the bucket's end" },
    unrealizedPnl: { ...Decimal, description: "Σ (mark − entry) × size of the positions open at the bucket's end, each marked at its market's last match up to then" },
    equity: { ...Decimal, description: 'collateral + unrealizedPnl' },
    realizedPnl: { ...Decimal, description: 'Realized PnL of the fill legs in the bucket (fees not included)' },
    fees: { ...Decimal, description: 'Fees of the fill legs in the bucket' },
    cumulativeRealizedPnl: Decimal,
    cumulativeFees: Decimal,
    netDeposits: { ...Decimal, description: 'Σ deposits − Σ approved withdrawals up to the bucket’s end' },
    pnl: { ...Decimal, description: 'Total PnL up to the bucket’s end: cumulativeRealizedPnl − cumulativeFees + unrealizedPnl (= equity − netDeposits)' },
  },
  { additionalProperties: false },
);

export const PnlBody = Type.Object(
  {
    party: Type.String(),
    interval: StringEnum(CANDLE_INTERVALS),
    asOfSeq: { ...Seq, description: 'The newest engine event the mirror held (every figure is as of it)' },
    points: Type.Array(PnlPoint, { description: 'One per bucket from `from` to `to`, oldest first; the last holds the present when `to` is the head' }),
  },
  { additionalProperties: false },
);

export const TradeHistoryItem = Type.Object(
  {
    seq: Seq,
    leg: Type.Integer({ minimum: 0 }),
    matchId: Type.String(),
    orderId: Type.String(),
    market: Market,
    side: StringEnum(['buy', 'sell'] as const),
    role: StringEnum(['taker', 'maker'] as const),
    size: Decimal,
    price: Decimal,
    fee: Decimal,
    realizedPnl: { ...Decimal, description: "This leg's realized PnL (the change of its epoch's realized PnL; 0 for an opening leg)" },
    cumulativeRealizedPnl: { ...Decimal, description: "The party's realized PnL over all markets up to and including this leg" },
    cumulativeFees: { ...Decimal, description: "The party's fees up to and including this leg" },
    positionId: Type.String(),
    createdAt: Timestamp,
  },
  { additionalProperties: false },
);

const EMPTY: PnlSource = { fromMs: 0, toMs: 0, headSeq: 0, headMs: null, legs: [], cash: [], marks: [] };

export const pnlRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  app.get(
    '/v1/users/:party/pnl',
    {
      schema: {
        operationId: 'getUserPnl',
        tags: ['mirror'],
        summary: "The party's profit and loss over time: equity, realized and unrealized PnL, fees, cumulative",
        description:
          'Exact (10-place decimals) from the mirror, bucketed on engine time like the candles. Unrealized PnL is marked at each ' +
          "bucket's last match (the account view's mark), so the bucket holding the head equals GET /v1/users/:party/account " +
          `(collateral, unrealizedPnl, equity). At most ${PNL_MAX_POINTS} buckets; a party with more than ${PNL_MAX_LEGS} fill legs is refused.`,
        params: PartyParams,
        querystring: Type.Object({
          interval: Type.Optional(StringEnum(CANDLE_INTERVALS, 'Bucket length (default 1h)')),
          from: Type.Optional(Ms("First bucket: the one holding this time (ms since the epoch); default the party's first event, at most 1000 buckets back")),
          to: Type.Optional(Ms('Last bucket: the one holding this time (ms since the epoch); default the mirror’s head')),
        }),
        response: { 200: PnlBody, ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { party } = request.params;
      const { from, to } = request.query;
      const interval = (request.query.interval ?? '1h') as CandleInterval;
      const intervalMs = INTERVAL_MS[interval];
      if (from !== undefined && to !== undefined && from > to) throw new ApiError('bad_request', 'query parameter "from" must not be after "to"');
      if (from !== undefined && to !== undefined && Math.floor(to / intervalMs) - Math.floor(from / intervalMs) + 1 > PNL_MAX_POINTS) {
        throw new ApiError('bad_request', `at most ${PNL_MAX_POINTS} buckets per request: narrow from/to or take a longer interval`);
      }
      const source = await db.readSnapshot(EMPTY, (tx) => loadPnlSource(tx, party, { fromMs: from, toMs: to, intervalMs, originMs: INTERVAL_ORIGIN_MS[interval], maxPoints: PNL_MAX_POINTS, nowMs: app.clock.now() }));
      if (source.legs.length > PNL_MAX_LEGS) throw new ApiError('bad_request', `this party has more than ${PNL_MAX_LEGS} fill legs: its PnL history is not served`);
      if ((source.toMs - source.fromMs) / intervalMs + 1 > PNL_MAX_POINTS) {
        throw new ApiError('bad_request', `at most ${PNL_MAX_POINTS} buckets per request: narrow from/to or take a longer interval`);
      }
      const points = source.headMs === null && source.legs.length === 0 && source.cash.length === 0 ? [] : pnlHistory(source, intervalMs);
      return { party, interval, asOfSeq: source.headSeq, points };
    },
  );

  app.get(
    '/v1/users/:party/trade-history',
    {
      schema: {
        operationId: 'listUserTradeHistory',
        tags: ['mirror'],
        summary: "The party's fill legs, newest first, each with its realized PnL and the cumulative realized PnL and fees up to it",
        params: PartyParams,
        querystring: Type.Object({ market: Type.Optional(Market), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(TradeHistoryItem), ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { market, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listTradeHistory(sql, { party: request.params.party, market, before, limit }));
    },
  );
};
