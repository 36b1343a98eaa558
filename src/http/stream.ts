// WebSocket fan-out at /v1/stream (docs/stream.md) and its AsyncAPI description at /docs/asyncapi.json.
// The WebSocket handshake is taken from the Fastify server's 'upgrade' event (ws, noServer). A
// plain GET of /v1/stream runs the upgrade's checks (StreamGate) and answers the refusal the upgrade
// would get, or 426 when the upgrade would be accepted: browsers hide a refused upgrade's status.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StreamHub } from '../stream/hub.js';
import { StreamMetrics } from '../stream/metrics.js';
import { inboundLimits } from '../stream/inbound-limit.js';
import { createUpgradeHandler, StreamGate, STREAM_PATH, type UpgradeContext } from './stream-upgrade.js';
import { connectionBudget } from './connection-limits.js';
import { streamMessageHandlers } from './stream-messages.js';
import { CallPipeline } from './calls/pipeline.js';
import { CLIENT_CALLS } from './calls/index.js';
import { addressGroup, clientIp, trustFunction } from '../client-address.js';
import { errors } from './schemas.js';
import { buildAsyncApi } from '../stream/asyncapi.js';
import { renderAsyncApiHtml } from '../stream/asyncapi-html.js';

export const streamRoutes: FastifyPluginAsyncTypebox<{ calls?: CallPipeline }> = async (app, { calls = new CallPipeline(CLIENT_CALLS) }) => {
  const runtime = app.live;
  // An app built without the runtime still accepts clients; they receive nothing (no event source).
  const metrics = runtime?.streamMetrics ?? StreamMetrics.for(app.metrics.registry);
  const hub =
    runtime?.hub ??
    new StreamHub({
      enabled: false,
      bufferBytes: app.config.wsClientBufferBytes,
      pingMs: app.config.wsPingMs,
      historySize: 0,
      metrics,
      logger: app.log,
      inbound: inboundLimits(app.config),
      clock: app.clock,
    });

  const trust = trustFunction(app.config.trustProxy);
  const deps = { config: app.config, sessions: app.sessions, replays: app.replays, logger: app.log };
  const budgets = app.workBudgets;
  const budget = connectionBudget(app.config);
  const context: UpgradeContext = {
    deps,
    hub,
    metrics,
    budget,
    knownMarkets: () => runtime?.knownMarkets() ?? null,
    budgets,
    admitBookView: (spec) => runtime?.admitBookView?.(spec),
  };
  const gate = new StreamGate(context);
  metrics.connectionLimit.set(gate.limit);
  // What the operator sized (WS_MAX_CONNECTIONS, the file limit, FD_HEADROOM) and what applies.
  const limits = { fileLimit: budget.fileLimit, fdHeadroom: budget.headroom, streams: budget.streams, httpConnections: budget.connections, wsMaxConnections: app.config.wsMaxConnections };
  if (budget.fileLimit === null) app.log.info(limits, 'connection limits: the open-file limit is unknown or unlimited; WS_MAX_CONNECTIONS alone applies');
  else if (budget.streams < app.config.wsMaxConnections) app.log.info(limits, 'connection limits: the open-file limit lowers the stream limit below WS_MAX_CONNECTIONS');
  else app.log.info(limits, 'connection limits');
  // What a connection sends (subscribe, unsubscribe, signed orders): read and answered per connection.
  const messageContext = { ...context, calls, maxBytes: inboundLimits(app.config).maxBytes };
  context.messages = (req) => {
    const ip = clientIp(req, trust);
    return streamMessageHandlers(messageContext, ip, addressGroup(ip));
  };
  const onUpgrade = createUpgradeHandler(context, gate);
  app.server.on('upgrade', onUpgrade);
  // Before the server closes its connections: every client gets 1001 "going away".
  app.addHook('preClose', async () => {
    await hub.closeAll();
  });
  app.addHook('onClose', async () => {
    app.server.off('upgrade', onUpgrade);
  });

  app.get(
    STREAM_PATH,
    {
      schema: {
        tags: ['stream'],
        summary: 'Live WebSocket stream (upgrade only; described as AsyncAPI at /docs/asyncapi.json)',
        description:
          'Open with a WebSocket client: `ws(s)://<host>/v1/stream?kinds=&markets=&intervals=&party=&since=&epoch=&control=&heartbeat=&snapshot=`. ' +
          'Frames, filters, control messages and close codes are described at `/docs/asyncapi.json`. ' +
          'A plain HTTP GET (no `Upgrade` header) runs exactly the checks of the upgrade (query parameters, party proof, ' +
          'per-address and global connection limits) and answers the same 400/401/403/429/503 `{error, code}` a refused ' +
          'upgrade gets, or 426 `upgrade_required` when the upgrade would be accepted: a browser, which cannot see why a ' +
          'WebSocket was refused, asks this way. A party proof is single-use: sign the probe afresh. ' +
          'Unknown query parameters are refused (400 naming the parameter).',
        // No signing headers: a party proof travels in the query (user, sessionId, sig).
        security: [],
        querystring: Type.Object({
          kinds: Type.Optional(Type.String({ description: 'Comma list (or repeated) of frame kinds' })),
          markets: Type.Optional(Type.String({ description: 'Comma list of exact market symbols; ignored when none is known to the engine' })),
          intervals: Type.Optional(Type.String({ description: 'Comma list of 1m,5m,15m,1h,4h,1d; narrows candle.* only' })),
          party: Type.Optional(Type.String({ description: 'Parties whose user-scoped frames to receive (needs proof unless AUTH_DISABLED)' })),
          since: Type.Optional(Type.String({ description: 'Replay frames after this seq from the in-memory history (implies control messages)' })),
          control: Type.Optional(
            Type.String({ description: 'true: also send the control messages stream.subscribed/stream.gap/stream.reset (not spec kinds); default false' }),
          ),
          epoch: Type.Optional(Type.String({ description: 'With since: the epoch (from stream.subscribed) the seq belongs to; another epoch gets stream.reset' })),
          heartbeat: Type.Optional(Type.String({ description: 'Seconds (1..300) between stream.heartbeat frames' })),
          snapshot: Type.Optional(Type.String({ description: 'false: no snapshot frames (state on subscribe); default true' })),
          user: Type.Optional(Type.String({ description: 'Party proof: the party id' })),
          sessionId: Type.Optional(Type.String({ description: 'Party proof: a session id' })),
          sig: Type.Optional(Type.String({ description: 'Party proof: <tsMs>.<hex> over "GET\\n/v1/stream\\n<tsMs>\\n"' })),
        }),
        response: {
          426: { ...Type.Ref('Error'), description: 'The upgrade would be accepted: connect with a WebSocket client (code `upgrade_required`)' },
          ...errors(400, 401, 403),
          429: {
            ...Type.Ref('Error'),
            description:
              'This client address holds WS_MAX_CONNECTIONS_PER_IP streams (code `too_many_connections`), or has used its budget of session lookups ' +
              '(SESSION_LOOKUPS_PER_IP) or snapshot reads (SNAPSHOT_READS_PER_IP) for the window, or its streams were closed a moment ago for their messages together (WS_ADDRESS_MESSAGES_PER_S), or it asks compress=deflate after its compression bombs (WS_DEFLATE_OVERSIZE_PER_IP) or while it holds WS_DEFLATE_CONNECTIONS_PER_IP compressed streams (code `budget_exhausted`, with `budget` and Retry-After)',
          },
          503: {
            ...Type.Ref('Error'),
            description:
              'The stream is full (code `too_many_connections`: WS_MAX_CONNECTIONS, or what the open-file limit leaves, FD_HEADROOM), shutting down (`shutting_down`), or the session could not be checked (`database_unavailable`)',
          },
        },
      },
      // The query is judged by the upgrade's own parser below (same messages as a refused upgrade).
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const address = gate.addressOf(request.raw);
      const url = new URL(request.url, 'http://gateway.invalid');
      // What an upgrade of the address would be refused for its own conduct, said here too.
      const refused = gate.conductRefused(url, address, null);
      if (refused) throw refused;
      await gate.admit(url, address);
      return reply
        .code(426)
        .header('upgrade', 'websocket')
        .send({ error: 'this route is a WebSocket stream: connect with a WebSocket client (see /docs/asyncapi.json)', code: 'upgrade_required' });
    },
  );

  const asyncapi = buildAsyncApi(calls.documents);
  app.get('/docs/asyncapi.json', { schema: { hide: true } }, async () => asyncapi);
  // The same document for people: one static page, linked from /docs.
  const asyncapiHtml = renderAsyncApiHtml(asyncapi);
  app.get('/docs/stream', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(asyncapiHtml));
};
