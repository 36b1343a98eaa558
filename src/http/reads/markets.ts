// Markets: every market the engine lists, with its trading rules, status and 24 h statistics
// (src/markets/catalog.ts: sources, caching, the window).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { Decimal, errors, Market as MarketSymbol, NullableDecimal, NullableSeq, Seq, Timestamp } from '../schemas.js';
import { MarketCatalog, MARKET_LIST_TTL_MS, PRICE_SIG_FIGS, STATS_TTL_MS } from '../../markets/catalog.js';

const Stats24h = Type.Object(
  {
    // Nullable decimals carry no description of their own (OpenAPI 3.0 keeps them as anyOf then):
    // the object's description says what each is.
    open: NullableDecimal,
    high: NullableDecimal,
    low: NullableDecimal,
    last: NullableDecimal,
    change: NullableDecimal,
    changePct: NullableDecimal,
    baseVolume: { ...Decimal, description: 'Σ match size (base units); "0.0000000000" without a match' },
    quoteVolume: { ...Decimal, description: 'Σ match price × size, rounded half away from zero to 10 places' },
    trades: Type.Integer({ minimum: 0, description: 'Matches (a flip’s two taker legs are one match)' }),
    asOfSeq: { ...NullableSeq, description: 'Newest seq of the mirror when the figures were computed' },
  },
  {
    description:
      'Matches of the last 24 h on the gateway clock ([now − 24 h, now], engine time of each match), counted as the live ' +
      '`trade` and `candle.*` frames count them. Recomputed at most once a second. `open`/`last`: prices of the first and ' +
      'latest match of the window; `change` = last − open; `changePct` = (last − open) / open × 100, 10 places rounded half ' +
      'away from zero. Prices, `change` and `changePct` are null without a match in the window.',
  },
);

export const MarketBody = Type.Object(
  {
    symbol: MarketSymbol,
    status: Type.String({ description: 'As the engine reports it, e.g. `active`' }),
    szDecimals: Type.Integer({ minimum: 0, description: 'Sizes are multiples of 10^-szDecimals' }),
    minNotional: { ...Decimal, description: 'Minimum size × price of an opening order' },
    maxLeverage: Type.Integer({ minimum: 1 }),
    sizeStep: { ...Decimal, description: '10^-szDecimals' },
    priceSigFigs: Type.Integer({ description: `Prices have at most ${PRICE_SIG_FIGS} significant figures (integers excepted)` }),
    maxPriceDecimals: Type.Integer({ minimum: 0, description: 'Prices have at most max(0, 6 − szDecimals) decimals' }),
    lastTrade: Type.Union(
      [
        Type.Object(
          {
            price: Decimal,
            seq: { ...Seq, description: 'Seq of the match' },
            at: { ...Timestamp, description: 'Engine time of the match' },
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The latest match whatever its age (stats24h.last is null once it is older than 24 h); null when the market never traded' },
    ),
    stats24h: Stats24h,
    openInterest: {
      ...Decimal,
      description: 'Open interest in base units: Σ size of the open long position epochs (= Σ |size| of the short ones), from the mirror, refreshed as the 24 h statistics are',
    },
  },
  { description: 'A market, its trading rules (engine contract grid rules), 24 h statistics and open interest' },
);

const CACHE = `public, max-age=${STATS_TTL_MS / 1000}`;
const SOURCES =
  `The list is the engine's \`GET /v1/markets\` (re-read at most every ${MARKET_LIST_TTL_MS / 1000} s); while the engine cannot ` +
  "answer, the indexer's `markets` table. 503 when the database cannot give the statistics.";

export const marketRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const catalog = new MarketCatalog(app.db, app.engine, app.log, app.clock);

  app.get(
    '/v1/markets',
    {
      schema: {
        operationId: 'listMarkets',
        security: [],
        tags: ['markets'],
        summary: 'Every market with its trading rules, status and 24 h statistics',
        description: `${SOURCES} Always one page: \`nextCursor\` is null.`,
        response: {
          200: Type.Object({ items: Type.Array(MarketBody), nextCursor: Type.Null({ description: 'Always null: one page' }) }),
          ...errors(503),
        },
      },
    },
    async (_request, reply) => {
      const items = await catalog.list();
      void reply.header('cache-control', CACHE);
      return { items, nextCursor: null };
    },
  );

  app.get(
    '/v1/markets/:market',
    {
      schema: {
        operationId: 'getMarket',
        security: [],
        tags: ['markets'],
        summary: 'One market with its trading rules, status and 24 h statistics',
        description: `${SOURCES} 404 \`not_found\` for a symbol neither lists (symbols are exact, case-sensitive).`,
        params: Type.Object({ market: MarketSymbol }),
        response: { 200: MarketBody, ...errors(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const market = await catalog.get(request.params.market);
      if (!market) throw new ApiError('not_found', `no market ${request.params.market}`);
      void reply.header('cache-control', CACHE);
      return market;
    },
  );
};
