// Composition root: builds the Fastify app from its dependencies. No I/O happens here or at
// import time (the database and engine pools connect lazily), so tests build as many apps as
// they like; main.ts is the only file that listens.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import { ApiError } from './http/errors.js';
import { ErrorBody } from './http/schemas.js';
import { systemRoutes } from './http/system.js';
import { readRoutes } from './http/reads.js';
import { tradingRoutes } from './http/trading.js';
import { streamRoutes } from './http/stream.js';
import { installAuthGuards, type SessionKeys } from './auth/guards.js';
import { validationMessage } from './http/validation.js';
import { strictIntegers } from './http/strict-integers.js';
import type { SharedState } from './fleet/shared-state.js';

/** What the live stream runtime reports to /readyz and /metrics. */
export interface LiveStatus {
  enabled: boolean;
  connected: boolean;
  maxSeq: number | null;
  gap?: string;
  /** Where engine events come from: the engine's SSE (default) or the fleet's JetStream stream. */
  source?: 'sse' | 'jetstream';
}

export interface LiveStatusSource {
  status(): LiveStatus;
}

export interface AppDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  /** Session public keys learnt from `session.authorized` events and the `sessions` table. */
  sessions: SessionKeys;
  /** The live stream runtime (SSE bridge, projections, hub); null in apps built without it. */
  live: (LiveStatusSource & Record<string, unknown>) | null;
  /** State shared by the replicas of a fleet (REDIS_URL, src/fleet/); null or absent: per process. */
  fleet?: SharedState | null;
}

export type RoutePlugin = FastifyPluginAsyncTypebox<{ deps: AppDeps }>;

export const ALLOWED_HEADERS = ['content-type', 'x-user', 'x-session-id', 'x-session-sig', 'last-event-id'];

/** The CORS origin to answer for errors raised before the CORS plugin runs. */
function allowedOrigin(origins: string[], origin: string | undefined): string | null {
  if (origins.includes('*')) return '*';
  return origin && origins.includes(origin) ? origin : null;
}

function trustProxyOption(trust: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust;
  const hops = trust;
  return (_address, hop) => hop < hops;
}

export type App = FastifyInstance<any, any, any, FastifyBaseLogger, TypeBoxTypeProvider>;

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Behind nginx `request.ip` is the client's address from X-Forwarded-For, trusted only as far
    // as TRUST_PROXY says (hops or proxy addresses), so a client cannot forge it (docs/configuration.md).
    // A hop count is given to Fastify as a function: Fastify itself now refuses to trust hop counts
    // (a client reaching the replica directly could forge them), so it is only for replicas that
    // nothing but the proxy can reach; an address list is the safe form.
    trustProxy: trustProxyOption(deps.config.trustProxy),
    // Per-request log lines cost more than the requests themselves at load; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // A signed body is forwarded byte for byte; 1 MiB is far above any order.
    bodyLimit: 1_048_576,
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false } },
    // On close, idle keep-alive connections are dropped at once and requests in flight finish.
    forceCloseConnections: 'idle',
    // Party ids are up to 114 characters; the router's default (100) would answer 414 to valid ones.
    routerOptions: { maxParamLength: 512 },
    // Errors raised by the router before any route runs (a path parameter over maxParamLength,
    // malformed percent-encoding) get the same {error, code} shape and CORS headers as the rest.
    frameworkErrors: (error, request, rawReply) => {
      const reply = rawReply as unknown as FastifyReply;
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
      const origin = allowedOrigin(deps.config.corsOrigins, request.headers.origin);
      if (origin) void reply.header('access-control-allow-origin', origin);
      void reply.code(status).send({
        error: status === 414 ? 'a path parameter is too long' : 'malformed request URL',
        code: 'bad_request',
      });
    },
    // Requests that still arrive while closing get the gateway's own 503 shape (hook below).
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addSchema(ErrorBody);

  // JSON bodies are kept as received: signatures cover the raw bytes and the trading proxy
  // forwards them unchanged. An empty body is allowed (DELETE, faucet).
  // The same holds for any other declared content type (a browser may label JSON `text/plain`):
  // the bytes are kept and must be JSON, else 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(body.toString('utf8')));
    } catch {
      done(new ApiError('bad_request', 'request body is not valid JSON'), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    if (!request.headers['content-type']) {
      return done(new ApiError('bad_request', 'a request body needs a Content-Type (application/json)', {}, 415), undefined);
    }
    try {
      done(null, JSON.parse(body.toString('utf8')));
    } catch {
      done(new ApiError('bad_request', 'request body must be JSON', {}, 415), undefined);
    }
  });


  // Query strings are strict on every /v1 route: an unknown or misspelt parameter is a 400 naming
  // it, never silently ignored (a dropped filter would answer with the wrong data).
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || !route.schema) return;
    const qs = route.schema.querystring as { type?: string; additionalProperties?: unknown } | undefined;
    if (!qs) route.schema.querystring = { type: 'object', properties: {}, additionalProperties: false };
    else if (qs.type === 'object' && qs.additionalProperties === undefined) {
      route.schema.querystring = { ...qs, additionalProperties: false };
    }
  });
  strictIntegers(app);

  await app.register(cors, {
    origin: deps.config.corsOrigins.includes('*') ? '*' : deps.config.corsOrigins,
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: ['retry-after', 'x-request-id'],
    maxAge: 600,
    // A plain OPTIONS that is not a CORS preflight falls through to the routes (404 in our shape).
    strictPreflight: false,
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Trading gateway',
        version: '1.0.0',
        description: [
          'Single entry point for the front end of a perpetuals exchange: REST reads over the indexer database,',
          'a signed non-custodial proxy to the matching engine, and a live WebSocket stream at `/v1/stream`',
          '(described as AsyncAPI at `/docs/asyncapi.json`).',
          '',
          'Conventions: decimals are strings with exactly 10 decimal places; times are ISO 8601 UTC with',
          'milliseconds; lists are `{"items": [...], "nextCursor": seq|null}` paginated by seq (`before` for',
          'newest-first lists, `since` for `/v1/events`), never by offset; `limit` is 1..1000 (default 100) and',
          'anything else is a 400. Every error is `{"error", "code"}`.',
        ].join('\n'),
        license: { name: 'UNLICENSED', url: 'https://example.invalid/license' },
      },
      servers: [{ url: '/', description: 'This gateway' }],
      tags: [
        { name: 'system', description: 'Health, readiness, metrics' },
        { name: 'vault', description: 'On-chain vaults' },
        { name: 'collateral', description: 'On-chain deposits and withdrawals' },
        { name: 'batches', description: 'On-chain batch manifests and user batches' },
        { name: 'mirror', description: 'Engine mirror: orders, fills, positions, triggers, balance' },
        { name: 'verifications', description: 'Engine claims checked against the chain' },
        { name: 'events', description: 'Mirror events, for backfill after a stream reconnect' },
        { name: 'trading', description: 'Signed, non-custodial proxy to the matching engine' },
        { name: 'stream', description: 'WebSocket upgrade at /v1/stream (frames described in /docs/asyncapi.json)' },
      ],
      components: {
        securitySchemes: {
          xUser: { type: 'apiKey', in: 'header', name: 'X-User', description: 'Party id' },
          xSessionId: { type: 'apiKey', in: 'header', name: 'X-Session-Id', description: 'Session id from /v1/session-auth' },
          xSessionSig: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Session-Sig',
            description: '`<tsMs>.<ed25519 signature hex>` by the session key over `METHOD\\nPATH\\ntsMs\\nBODY`',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  // Shutdown: requests already in flight finish and are answered `Connection: close`, idle
  // keep-alive sockets are closed at once. A request can then only reach the app by racing
  // closeIdleConnections() on a socket that was idle; that one gets 503 `shutting_down` in the usual
  // shape (a safety net: Node reads nothing more from a socket answered `Connection: close`).
  // Registered after CORS, so that 503 carries the CORS headers too. Callback style (no
  // promise per request): these hooks run on every request.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    app.server.closeIdleConnections();
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    void reply.header('retry-after', '1');
    done(new ApiError('shutting_down', 'the gateway is shutting down; retry on another instance'));
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  // Every request, so callback style, and the metric children of each (route, method, status) made
  // once: a child's inc/observe skips prom-client's hashing of the label set on every call.
  const children = new Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(key);
    if (!child) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      child = { count: deps.metrics.httpRequests.labels(labels), duration: deps.metrics.httpDuration.labels(labels) };
      children.set(key, child);
    }
    child.count.inc();
    child.duration.observe(reply.elapsedTime / 1000);
    done();
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.status >= 500) request.log.warn({ code: error.code, url: request.url }, error.message);
      return reply.code(error.status).send(error.body());
    }
    if (error.validation) {
      return reply.code(400).send({ error: validationMessage(error), code: 'bad_request' });
    }
    const status = error.statusCode ?? 500;
    if (status === 429) return reply.code(429).send({ error: error.message, code: 'rate_limited' });
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, unsupported media type, body too large, …
      return reply.code(status).send({ error: error.message, code: status === 404 ? 'not_found' : 'bad_request' });
    }
    request.log.error({ err: error, url: request.url }, 'unhandled error');
    return reply.code(500).send({ error: 'internal error', code: 'internal_error' });
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
  });

  installAuthGuards(app, { config: deps.config, sessions: deps.sessions, replays: deps.fleet?.replays });

  await app.register(systemRoutes, { deps });
  await app.register(readRoutes, { deps });
  await app.register(tradingRoutes, { deps });
  await app.register(streamRoutes, { deps });

  return app;
}
