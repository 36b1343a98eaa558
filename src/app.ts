// Composition root: builds the Fastify app from its dependencies. No I/O happens here or at import
// time (the database and engine pools connect lazily), so tests build as many apps as they like;
// main.ts is the only file that listens. Each concern is a plugin of its own (src/http/plugins/);
// the order below is the order their hooks run in, and the `onRoute` plugins (strict queries, auth
// guards) come before the routes they act on.
import type { Server as HttpServer } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { trustFunction } from './client-address.js';
import type { AppDeps } from './deps.js';
import { ErrorBody } from './http/schemas.js';
import { dependencies } from './http/dependencies.js';
import { bodyParsers } from './http/plugins/body-parsers.js';
import { strictQuery } from './http/plugins/strict-query.js';
import { corsPolicy } from './http/plugins/cors.js';
import { openApi } from './http/plugins/openapi.js';
import { requestId, requestIdHeader } from './http/plugins/request-id.js';
import { readFlow } from './http/plugins/read-flow.js';
import { gracefulShutdown } from './http/plugins/shutdown.js';
import { requestMetrics } from './http/plugins/request-metrics.js';
import { statusMetrics } from './http/plugins/status-metrics.js';
import { errorHandler, routerErrors } from './http/plugins/error-handler.js';
import { clientErrorHandler, installConnectionLimits } from './http/connection-limits.js';
import { systemRoutes } from './http/system.js';
import { readRoutes } from './http/reads.js';
import { tradingRoutes } from './http/trading.js';
import { CallPipeline } from './http/calls/pipeline.js';
import { CLIENT_CALLS } from './http/calls/index.js';
import { streamRoutes } from './http/stream.js';
import { httpTracingPlugin } from './tracing/index.js';

export type { AppDeps } from './deps.js';

export type App = FastifyInstance<any, any, any, FastifyBaseLogger, TypeBoxTypeProvider>;

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Per-request log lines cost more than the requests themselves at load; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // A signed body is forwarded byte for byte; 1 MiB is far above any order.
    bodyLimit: 1_048_576,
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false } },
    // On close, idle keep-alive connections are dropped at once and requests in flight finish.
    forceCloseConnections: 'idle',
    // Party ids are up to 114 characters; the router's default (100) would answer 414 to valid ones.
    routerOptions: { maxParamLength: 512 },
    frameworkErrors: routerErrors(deps.config.corsOrigins),
    // Requests that still arrive while closing get the gateway's own 503 shape (plugins/shutdown.ts).
    return503OnClosing: false,
    // Behind nginx `request.ip` is the client's address from X-Forwarded-For, trusted only as far
    // as TRUST_PROXY says (hops or proxy addresses), so a client cannot forge it (docs/configuration.md).
    // The stream caps key on the same client (src/client-address.ts). A hop count is given to
    // Fastify as a function: Fastify itself now refuses to trust hop counts (a client reaching the
    // replica directly could forge them), so it is only for replicas that nothing but the proxy can
    // reach; an address list is the safe form.
    trustProxy: trustFunction(deps.config.trustProxy) ?? false,
    requestIdHeader: false,
    genReqId: requestId,
    // Slow clients cannot hold a socket (docs/security.md): the header block, the whole request and
    // an idle keep-alive each have a deadline, and a socket where nothing moves is closed.
    connectionTimeout: deps.config.httpIdleTimeoutMs,
    keepAliveTimeout: deps.config.httpKeepAliveTimeoutMs,
    requestTimeout: deps.config.httpRequestTimeoutMs,
    clientErrorHandler: clientErrorHandler(deps.config) as never,
  }).withTypeProvider<TypeBoxTypeProvider>();
  const server = app.server as HttpServer;
  server.headersTimeout = deps.config.httpHeadersTimeoutMs;
  // Node checks the header and request deadlines on this period (default 30 s); read at listen.
  (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(1_000, deps.config.httpHeadersTimeoutMs);
  // Per-address connection cap, answered in the gateway's shape (connection-limits.ts).
  installConnectionLimits(server, deps.config, deps.metrics.registry);

  app.addSchema(ErrorBody);
  // First, so every route registered after it gets its span (only when traces are on: src/tracing/).
  const tracing = httpTracingPlugin();
  if (tracing) await app.register(tracing);
  await app.register(dependencies, { deps });
  await app.register(bodyParsers);
  await app.register(strictQuery);
  await app.register(corsPolicy);
  await app.register(openApi);
  await app.register(requestIdHeader);
  await app.register(readFlow);
  await app.register(gracefulShutdown);
  await app.register(requestMetrics);
  await app.register(statusMetrics);
  await app.register(errorHandler);

  await app.register(systemRoutes);
  await app.register(readRoutes);
  // Every client call, declared once (src/http/calls/), through one pipeline: the trading routes give
  // it its parts and register the calls' REST routes; the stream reads the calls' socket messages
  // with it and documents them.
  const calls = new CallPipeline(CLIENT_CALLS);
  await app.register(tradingRoutes, { calls });
  await app.register(streamRoutes, { calls });
  return app;
}
