// The OpenAPI 3 description (`/docs/json`) and its interactive UI (`/docs`), generated from the
// routes' TypeBox schemas. The stream is described separately as AsyncAPI (src/stream/asyncapi.ts).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';

const DESCRIPTION = [
  'Single entry point for the front end of a perpetuals exchange: REST reads over the indexer database,',
  'a signed non-custodial proxy to the matching engine, and a live WebSocket stream at `/v1/stream`',
  '(described as AsyncAPI: readable at [/docs/stream](/docs/stream), JSON at `/docs/asyncapi.json`).',
  '',
  'Conventions: decimals are strings with exactly 10 decimal places; times are ISO 8601 UTC with',
  'milliseconds; lists are `{"items": [...], "nextCursor": seq|null}` paginated by seq (`before` for',
  'newest-first lists, `since` for `/v1/events`), never by offset; `limit` is 1..1000 (default 100) and',
  'anything else is a 400. Every error is `{"error", "code"}`.',
].join('\n');

const TAGS = [
  { name: 'system', description: 'Health, readiness, metrics, server time' },
  { name: 'markets', description: 'Markets, their trading rules and 24 h statistics; candle history' },
  { name: 'vault', description: 'On-chain vaults' },
  { name: 'collateral', description: 'On-chain deposits and withdrawals' },
  { name: 'batches', description: 'On-chain batch manifests and user batches' },
  { name: 'mirror', description: 'Engine mirror: orders, fills, positions, triggers, balance' },
  { name: 'verifications', description: 'Engine claims checked against the chain' },
  { name: 'events', description: 'Mirror events, for backfill after a stream reconnect' },
  { name: 'trading', description: 'Signed, non-custodial proxy to the matching engine' },
  { name: 'stream', description: 'WebSocket upgrade at /v1/stream (frames described at /docs/stream and /docs/asyncapi.json)' },
];

const SIGNED_HEADERS = {
  xUser: { type: 'apiKey', in: 'header', name: 'X-User', description: 'Party id' },
  xSessionId: { type: 'apiKey', in: 'header', name: 'X-Session-Id', description: 'Session id from /v1/session-auth' },
  xSessionSig: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Session-Sig',
    description: '`<tsMs>.<ed25519 signature hex>` by the session key over `METHOD\\nPATH\\ntsMs\\nBODY`',
  },
} as const;

export const openApi = fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'Trading gateway',
          version: '1.0.0',
          description: DESCRIPTION,
          license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
        },
        servers: [{ url: '/', description: 'This gateway' }],
        tags: TAGS,
        components: { securitySchemes: SIGNED_HEADERS },
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
    // Every documented route states its security: public ones `security: []` (the guards' hook,
    // registered later, marks party routes signed; routes that name their own scheme keep it).
    app.addHook('onRoute', (route) => {
      if (route.schema && !route.schema.hide && route.schema.security === undefined) route.schema.security = [];
    });
  },
  { name: 'openapi', fastify: '5.x' },
);
