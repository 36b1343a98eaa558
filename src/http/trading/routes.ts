// The signed, non-custodial proxy routes (docs/trading.md). The gateway holds no keys: it checks
// that the three signing headers are present exactly once (401/400 before anything reaches the
// engine) and forwards them with the raw body and the signed request target. The engine verifies
// the signature; its answers come back unchanged (see relay.ts). Session keys created through
// `/v1/session-auth` are also taught to the guard of the party-scoped reads, so a client can read
// its own data right after creating a session, before the SSE event or the mirror catch up.
//
// The client calls (place, cancel, TP/SL, the desk's) are declared in src/http/calls/ and reach the
// engine through the one pipeline; this plugin builds the parts their handlers act with (the
// verified-forward of each engine route, the desk's, the switch) and hands them to the pipeline.
// The routes registered here are the proxy's others: session-auth, the order book, user/me.
import type { SignedHeaders } from '../../auth/signed-request.js';
import type { TradingBudgets } from './rate-limit.js';
import { verifiedPartyForBudget } from '../../auth/party-for-budget.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseJson } from '../../engine/client.js';
import { addressGroup } from '../../client-address.js';
import { replayEntries, signedHeaders, spendReplayEntries, spentSignatures } from '../../auth/signed-request.js';
import { learnSession } from './learn-session.js';
import { SessionLearning } from '../../auth/session-learning.js';
import { ApiError } from '../errors.js';
import { errors } from '../schemas.js';
import { canonicalTarget, documentOnly, PROXY_ERRORS, SIGNED_NOTE } from '../calls/rest.js';
import type { CallPipeline } from '../calls/pipeline.js';
import type { ClientCall } from '../calls/declaration.js';
import { placeOrder } from '../calls/place.js';
import { cancelOrder } from '../calls/cancel.js';
import { forwarder, routeCall, type RouteCall } from './forward.js';
import type { LiveView } from '../../stream/live-view.js';
import type { EngineResponse } from '../../engine/client.js';
import { readGetBody } from './get-body.js';
import { proxyMetrics } from './metrics.js';
import type { DeskParts } from './batch.js';
import { MemoryClaims } from '../../fleet/claims.js';
import { ClientOrderIds } from './client-order-ids.js';
import { mirrorClientOrder } from './client-order-routes.js';
import { engineHead } from '../../engine/engine-head.js';
import { fetchLiveOrders } from '../reads/live-orders.js';
import { DeadMansSwitch } from './dead-mans-switch.js';
import { MemorySwitchStore } from '../../fleet/switch-store.js';
import { Counter } from 'prom-client';
import { Orderbook, OrderbookQuery, OrderBody, SessionAuthAnswer, SessionAuthBody, SIGNED, UserMeAnswer, UserMeBody } from './schemas.js';
import { bodyShape, TRADING_BODY_MAX_BYTES } from './body-shape.js';

export const tradingProxyRoutes: FastifyPluginAsyncTypebox<{ budgets: TradingBudgets; calls: CallPipeline }> = async (app, { budgets, calls }) => {
  const { engine, sessions, config, replays } = app;
  const metrics = proxyMetrics(app.metrics);
  const learning = new SessionLearning(sessions);
  // A signed call spends its party's budget only once the gateway has verified the signature.
  const chargeParty = async (headers: SignedHeaders, method: string, target: string, body: Buffer): Promise<string | null> => {
    const party = await verifiedPartyForBudget(sessions, replays, { method, target, body, headers });
    if (party) await budgets.party(party);
    return party;
  };
  // One forwarder per route, built once: metric labels and route options are not rebuilt per call.
  const sessionAuth = forwarder({
    engine,
    metrics,
    route: 'POST /v1/session-auth',
    signed: false,
    shape: bodyShape('POST /v1/session-auth', SessionAuthBody),
    onAnswer: (call, res) => learnSession(learning, call.body === undefined ? undefined : parseJson(call.body), res),
  });
  // One order per client order id and party, across replicas when they share Redis (client-order-ids.ts):
  // the place's admission and the status route read the same claims, so they say the same thing.
  const settled = new Counter({
    name: 'bff_client_order_claims_settled_total',
    help: 'Client order id claims settled, by how (refused: the engine refused the place; live / not_placed: from the engine events; answer / mirror / engine: turned into the placed order; unverified: released at the bound with no one able to tell)',
    labelNames: ['outcome'],
    registers: [app.metrics.registry],
  });
  const clientOrderIds = new ClientOrderIds({
    claims: app.fleet?.claims ?? new MemoryClaims(undefined, app.clock),
    live: app.live,
    mirror: app.db.configured ? mirrorClientOrder(app.db) : null,
    engineOpenOrders: async (party) => {
      const r = await fetchLiveOrders(engine, party, 'all', config.engineTimeoutMs);
      return r.ok ? r.orders : null;
    },
    engineHead: () => engineHead(engine, config.engineTimeoutMs),
    clock: app.clock,
    marginMs: config.clientOrderClaimMarginMs,
    onSettled: (outcome) => settled.inc({ outcome }),
    log: (err, msg) => app.log.warn({ err }, msg),
  });
  app.addHook('onClose', async () => clientOrderIds.stop());
  const admit = clientOrderIds.admit;
  const orderShape = bodyShape('POST /v1/orders', OrderBody);
  const explain = (res: EngineResponse) => explainEndedAtOnce(app.live, res);
  // Each call's verified-forward (place, cancel, TP/SL), built once from its declared engine route
  // (src/http/calls/): REST and the socket send through the same check, memory and budget.
  const forwards = new Map<ClientCall, RouteCall>();
  for (const call of calls.calls) {
    const e = call.engine;
    if (!e) continue;
    forwards.set(
      call,
      routeCall({
        engine,
        metrics,
        route: e.route,
        signed: true,
        chargeParty,
        ...(e.body ? { shape: bodyShape(e.route, e.body) } : {}),
        ...(e.admit === 'client-order-id' ? { admit } : {}),
        ...(e.explain === 'ended-at-once' ? { amend: explain } : {}),
      }),
    );
  }
  // The desk's items and the switch's cancels are the very calls sent alone.
  const placeOrderCall = forwards.get(placeOrder);
  const cancelOrderCall = forwards.get(cancelOrder);
  if (!placeOrderCall || !cancelOrderCall) throw new Error('the desk needs the place and cancel calls in the list of calls');
  // The desk (batches, cancel-replace): the same verified-forwards, their budget charged by weight.
  const desk: DeskParts = {
    place: placeOrderCall,
    cancel: cancelOrderCall,
    verify: (signature, method, target, body, offThread, when) => verifiedPartyForBudget(sessions, replays, { method, target, body, headers: signature, offThread }, when),
    spent: (signatures) => spentSignatures(replays, signatures),
    readySpend: (signatures) => {
      const entries = replayEntries(replays, signatures);
      return (accepted) => spendReplayEntries(replays, entries.filter((_, i) => accepted[i]));
    },
    budgets,
    admitPlace: async (call) => {
      orderShape(call.body);
      return admit(call.party ?? null, call);
    },
    log: (err) => app.log.warn({ err }, 'batch item failed'),
    engineRoom: (ip) => engine.share.room(addressGroup(ip)),
  };
  const clientOrder = (party: string, clientOrderId: string) => clientOrderIds.status(party, clientOrderId);
  // The dead man's switch: every replica looks for due switches in the shared store (dead-mans-switch.ts).
  const fired = new Counter({
    name: 'bff_switch_cancels_total',
    help: 'Cancels sent by fired dead man\'s switches, by outcome (cancelled: the engine answered ok:true; refused: anything else, e.g. order_not_open)',
    labelNames: ['outcome'],
    registers: [app.metrics.registry],
  });
  const deadMansSwitch = new DeadMansSwitch({
    store: app.fleet?.switches ?? new MemorySwitchStore(() => app.clock.now()),
    sessions,
    cancel: cancelOrderCall,
    log: app.log,
    onFired: (f) => {
      for (const r of f.results) fired.inc({ outcome: r.code === null ? 'cancelled' : 'refused' });
    },
  });
  app.addHook('onReady', async () => deadMansSwitch.start());
  app.addHook('onClose', async () => deadMansSwitch.stop());
  calls.parts = { budgets, forwards, desk, clientOrder, deadMansSwitch };
  const orderbook = forwarder({
    engine,
    metrics,
    route: 'GET /v1/orderbook',
    signed: false,
    shareReads: config.orderbookSharedReads,
    deadlineMs: config.engineTimeoutMs,
  });
  const userMeShape = bodyShape('GET /v1/user/me', UserMeBody);
  const userMe = forwarder({ engine, metrics, route: 'GET /v1/user/me', signed: true, chargeParty, shape: userMeShape });
  const userMeByPost = forwarder({ engine, metrics, route: 'POST /v1/user/me', signed: true, chargeParty, engineMethod: 'GET', shape: userMeShape });

  app.post('/v1/session-auth', {
    validatorCompiler: documentOnly,
    schema: {
      tags: ['trading'],
      summary: 'Create a trading session',
      operationId: 'createSession',
      security: [],
      description:
        'The party key signs `session-auth\\n<party>\\n<sessionPublicKey>\\n<expiresAt>`; the engine answers the session id. ' +
        `A body with another field, a wrong type, a string over its length or over ${TRADING_BODY_MAX_BYTES} bytes is 400 \`invalid_body\` (docs/trading.md).`,
      body: SessionAuthBody,
      response: { 200: SessionAuthAnswer, ...PROXY_ERRORS },
    },
    handler: async (request, reply) => {
      if (!request.rawBody || request.rawBody.length === 0) throw new ApiError('bad_request', 'body is required: {party, sessionPublicKey, expiresAt, signature}');
      return sessionAuth(request, reply, canonicalTarget(request, '/v1/session-auth'));
    },
  });

  // No automatic HEAD twins: a HEAD would be forwarded as HEAD, which the engine does not serve.
  app.get('/v1/orderbook', {
    exposeHeadRoute: false,
    schema: {
      tags: ['trading'],
      summary: 'Order book snapshot (public)',
      operationId: 'getOrderbook',
      description:
        'The engine\'s book, relayed unchanged. Identical reads arriving while one is in flight share the next engine call (never one that started before they arrived), so every answer is at least as fresh as the request.',
      security: [],
      querystring: OrderbookQuery,
      response: { 200: Orderbook, ...errors(400, 429, 502, 504) },
    },
    handler: async (request, reply) => {
      const { depth = 20, market } = request.query;
      // Built from the validated values: public, unsigned, so the exact client spelling is not needed.
      const path = `/v1/orderbook?depth=${depth}${market === undefined ? '' : `&market=${encodeURIComponent(market)}`}`;
      return orderbook(request, reply, path);
    },
  });

  app.get('/v1/user/me', {
    exposeHeadRoute: false,
    schema: {
      tags: ['trading'],
      summary: 'The party as the engine sees it (GET with a signed JSON body)',
      operationId: 'getUserMe',
      description: `${SIGNED_NOTE} The JSON body \`{"party": <X-User>}\` travels on the GET and is covered by the signature. Browsers cannot send a GET body (fetch forbids it): call this from a server (the client package's Node entry).`,
      security: SIGNED,
      // Documented in the OpenAPI text only: OpenAPI 3.0 has no request body on GET, so the body is described above.
      response: { 200: UserMeAnswer, ...PROXY_ERRORS },
    },
    handler: async (request, reply) => {
      signedHeaders(request); // 401/400 before the body is even read
      const target = canonicalTarget(request, '/v1/user/me');
      request.rawBody = await readGetBody(request, 1_048_576, config.engineTimeoutMs);
      if (request.rawBody.length === 0) throw new ApiError('bad_request', 'GET /v1/user/me needs the signed JSON body {"party": <X-User>}');
      if (parseJson(request.rawBody) === undefined) throw new ApiError('bad_request', 'request body is not valid JSON');
      return userMe(request, reply, target);
    },
  });

  // Browsers cannot send a GET body: the same signed call (signed as GET) sent as a POST, forwarded
  // to the engine as the GET it was signed for, headers and body byte for byte (docs/trading.md).
  app.post('/v1/user/me', {
    validatorCompiler: documentOnly,
    schema: {
      tags: ['trading'],
      summary: 'The party as the engine sees it, for browsers (the signed GET sent as a POST)',
      operationId: 'getUserMeByPost',
      description: `${SIGNED_NOTE} The same call as GET /v1/user/me, signed exactly as that GET (\`GET\\n/v1/user/me\\n<ts>\\n<body>\`), sent as a POST because browser fetch forbids a GET body; the gateway forwards it to the engine as that GET.`,
      security: SIGNED,
      body: UserMeBody,
      response: { 200: UserMeAnswer, ...PROXY_ERRORS },
    },
    handler: async (request, reply) => {
      signedHeaders(request);
      if (!request.rawBody || request.rawBody.length === 0) throw new ApiError('bad_request', 'POST /v1/user/me needs the signed JSON body {"party": <X-User>}');
      return userMeByPost(request, reply, canonicalTarget(request, '/v1/user/me'));
    },
  });
};

/** How long a place-order answer waits for the cancel event that says why the order ended. */
export const OUTCOME_WAIT_MS = 250;

/**
 * An order the engine answered `cancelled` ended at once (an IOC or market order without enough
 * liquidity, margin, reduce-only): the answer gets the `reason` of its engine.order_cancelled
 * event (docs/trading.md). Any other answer, or no event within OUTCOME_WAIT_MS: relayed as is.
 */
async function explainEndedAtOnce(live: LiveView | null, res: EngineResponse): Promise<Buffer | null> {
  if (!live || !res.body.includes('"cancelled"')) return null;
  let answer: unknown;
  try {
    answer = JSON.parse(res.body.toString('utf8'));
  } catch {
    return null;
  }
  const a = answer as { ok?: unknown; status?: unknown; orderId?: unknown };
  if (typeof answer !== 'object' || answer === null || a.ok !== true || a.status !== 'cancelled' || typeof a.orderId !== 'string') return null;
  const reason = await live.orderOutcome(a.orderId, OUTCOME_WAIT_MS);
  return reason === null ? null : Buffer.from(JSON.stringify({ ...(answer as object), reason }));
}
