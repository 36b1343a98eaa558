// Candle history: the bars of the live `candle.*` frames, rebuilt from the mirror's fills
// (src/db/queries/candle-history.ts), newest `limit` buckets of a window, paged backwards by time.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { Decimal, errors, Market, Timestamp } from '../schemas.js';
import { candlePage, headTime, type BarRow } from '../../db/queries/candle-history.js';
import { INTERVAL_MS, INTERVAL_ORIGIN_MS } from '../../projections/candles.js';
import { CANDLE_INTERVALS, type CandleInterval } from '../../contracts/frame.js';
import { normalizeDecimal } from '../../decimal.js';
import { DEFAULT_LIMIT, OptLimit, StringEnum } from './shapes.js';
import { KeyedTtlCache } from '../../markets/ttl-cache.js';

/**
 * Identical requests within a second share one database read: a chart's first screen is the same
 * page for every viewer, and the page cursors are bucket starts, so paging clients ask the same
 * keys too. A wide page (1h and longer intervals over a long history) costs up to a second of
 * database time; this bounds it per key whatever the number of viewers.
 */
const PAGE_TTL_MS = 1_000;

/** Unix ms bounds: non-negative integers up to year 9999. */
const Ms = (description: string) => Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description });

export const Candle = Type.Object(
  {
    market: Market,
    interval: StringEnum(CANDLE_INTERVALS),
    openTs: { ...Timestamp, description: 'Bucket start (UTC-aligned)' },
    closeTs: { ...Timestamp, description: 'Bucket end (exclusive)' },
    open: Decimal,
    high: Decimal,
    low: Decimal,
    close: Decimal,
    volume: { ...Decimal, description: 'Base size traded in the bucket' },
    trades: Type.Integer({ minimum: 1, description: 'Matches in the bucket (a flip’s two taker legs are one match)' }),
    closed: Type.Boolean({ description: 'true once engine time has reached closeTs (the bar equals its `candle.close` frame)' }),
  },
  { description: 'One OHLCV bucket; its fields other than market, interval and closed equal the live frame payload' },
);

export const candleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  const pages = new KeyedTtlCache<{ page: { bars: BarRow[]; more: boolean }; nowMs: number | null }>(PAGE_TTL_MS, undefined, app.clock);

  app.get(
    '/v1/candles',
    {
      schema: {
        operationId: 'listCandles',
        security: [],
        tags: ['markets'],
        summary: 'Candle history of a market, oldest first, paged backwards by time',
        description:
          'Buckets are bucketed exactly as the live `candle.update`/`candle.close` frames: UTC-aligned, timed by the engine time of ' +
          'each match, volume in base units, one trade per match. Only buckets with at least one match exist. The answer holds the ' +
          '`limit` most recent buckets whose start is in [`from`, `to`), oldest first; `nextCursor` is the start (ms) of the oldest ' +
          'bar returned when older bars exist in the window: pass it as `to` for the previous page. A closed bar equals its ' +
          '`candle.close` payload; the current bar (`closed: false`) equals the latest `candle.update`.',
        querystring: Type.Object({
          market: Market,
          interval: StringEnum(CANDLE_INTERVALS, 'Bucket length'),
          from: Type.Optional(Ms('Only buckets starting at or after this time (ms since the epoch)')),
          to: Type.Optional(Ms('Only buckets starting before this time (ms since the epoch); a `nextCursor` goes here')),
          limit: OptLimit,
        }),
        response: {
          200: Type.Object({
            items: Type.Array(Candle),
            nextCursor: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
              description: 'null when no older bar is in the window; otherwise the oldest bar’s start in ms: pass it back as `to`',
            }),
          }),
          ...errors(400, 503),
        },
      },
    },
    async (request, reply) => {
      const { market, from, to, limit = DEFAULT_LIMIT } = request.query;
      const interval = request.query.interval as CandleInterval;
      if (from !== undefined && to !== undefined && from >= to) {
        throw new ApiError('bad_request', 'query parameter "from" must be below "to"');
      }
      const lengthMs = INTERVAL_MS[interval];
      const { page, nowMs } = await pages.get(`${market} ${interval} ${from ?? ''} ${to ?? ''} ${limit}`, () =>
        db.read({ page: { bars: [] as BarRow[], more: false }, nowMs: null as number | null }, async (sql) => {
          const [page, nowMs] = await Promise.all([candlePage(sql, { market, lengthMs, originMs: INTERVAL_ORIGIN_MS[interval], fromMs: from, toMs: to, limit }), headTime(sql)]);
          return { page, nowMs };
        }),
      );
      void reply.header('cache-control', 'public, max-age=1');
      const items = page.bars.map((b) => ({
        market,
        interval,
        openTs: new Date(b.bucketMs).toISOString(),
        closeTs: new Date(b.bucketMs + lengthMs).toISOString(),
        open: normalizeDecimal(b.open),
        high: normalizeDecimal(b.high),
        low: normalizeDecimal(b.low),
        close: normalizeDecimal(b.close),
        volume: normalizeDecimal(b.volume),
        trades: b.trades,
        closed: nowMs !== null && b.bucketMs + lengthMs <= nowMs,
      }));
      return { items, nextCursor: page.more && page.bars.length > 0 ? page.bars[0]!.bucketMs : null };
    },
  );
};
