// The signed, non-custodial proxy routes (docs/trading.md). The gateway holds no keys: it checks
// that the three signing headers are present exactly once (401/400 before anything reaches the
// engine) and forwards them with the raw body and the signed request target. The engine verifies
// the signature; its answers come back unchanged (see relay.ts). Session keys created through
// `/v1/session-auth` are also taught to the guard of the party-scoped reads, so a client can read
// its own data right after creating a session, before the SSE event or the mirror catch up.
import type { SignedHeaders } from '../../auth/signed-request.js';
import { verifiedPartyForBudget, type TradingBudgets } from './rate-limit.js';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseJson } from '../../engine/client.js';
import { addressGroup } from '../../client-address.js';
import { replayEntries, signedHeaders, spendReplayEntries, spentSignatures } from '../../auth/signed-request.js';
import { learnSession } from './learn-session.js';
import { SessionLearning } from '../../auth/session-learning.js';
import { ApiError } from '../errors.js';
import { errors } from '../schemas.js';
import { forwarder, routeCall } from './forward.js';
import type { LiveView } from '../../stream/live-view.js';
import type { EngineResponse } from '../../engine/client.js';
import { readGetBody } from './get-body.js';
import { orderIdPath } from './targets.js';
import { socketTrading, type TradingSlot } from './socket-calls.js';
import { proxyMetrics } from './metrics.js';
import type { DeskParts } from './batch.js';
import { deskRoutes } from './desk-routes.js';
import { MemoryClaims } from '../../fleet/claims.js';
import { clientOrderAdmission } from './client-order-ids.js';
import { findClientOrder } from './client-order-routes.js';
import { DeadMansSwitch } from './dead-mans-switch.js';
import { MemorySwitchStore } from '../../fleet/switch-store.js';
import { Counter } from 'prom-client';
import {
  CancelAnswer,
  CancelParams,
  Orderbook,
  OrderbookQuery,
  OrderAnswer,
  OrderBody,
  SessionAuthAnswer,
  SessionAuthBody,
  SIGNED,
  TpslAnswer,
  TpslBody,
  UserMeAnswer,
  UserMeBody,
} from './schemas.js';
import { bodyShape, TRADING_BODY_MAX_BYTES } from './body-shape.js';

/**
 * The target forwarded to the engine is built from validated parameters only, never taken from the
 * request line. The engine verifies the signature over the target as the client sent it, so the two
 * must be the same bytes: a target that is not that origin-form path (an absolute-form
 * `http://host/v1/orders`, a stray `?`, another percent-encoding) is refused, not rewritten.
 */
function canonicalTarget(request: FastifyRequest, path: string): string {
  if (request.url !== path) {
    throw new ApiError('bad_request', `the request target must be exactly ${JSON.stringify(path)} (origin form, canonical encoding)`);
  }
  return path;
}

/**
 * Fastify does not validate the bodies: its Ajv would coerce (a number into a string) and answer
 * its own 400. The body schemas are checked by routeCall (body-shape.ts), for REST and the socket
 * alike, on the raw bytes that are then forwarded unchanged.
 */
const documentOnly = () => () => true;
const PROXY_ERRORS = errors(400, 401, 413, 415, 429, 502, 503, 504);
/** A place whose client order id the party already used (client-order-ids.ts): the shared 409 text is the mirror's. */
const DUPLICATE_ORDER = {
  409: {
    ...Type.Ref('Error'),
    description:
      'Duplicate (code `duplicate_client_order_id`, with `order`: the first order of this party with this clientOrderId, `{clientOrderId, orderId, status, …}`; `{clientOrderId, status: "pending", orderId: null}` while it is on its way): nothing was sent to the engine (docs/trading.md "Client order ids")',
  },
};
const SIGNED_NOTE =
  'Signed: headers `X-User`, `X-Session-Id`, `X-Session-Sig` (docs/engine.md "Signing"), forwarded unchanged with the raw body. ' +
  `A body that is not this request's shape (a field not listed, a number for a decimal string, a value outside an enum, a string over its length, more than ${TRADING_BODY_MAX_BYTES} bytes) ` +
  'is refused 400 `invalid_body` (with `field`) before anything is forwarded (docs/trading.md).';

export const tradingProxyRoutes: FastifyPluginAsyncTypebox<{ budgets: TradingBudgets; slot?: TradingSlot }> = async (app, { budgets, slot }) => {
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
  // Place and cancel: one verified-forward each, called by the REST routes below and by the
  // socket's order messages (socket-calls.ts), so both are the same check, memory and budget.
  // One order per client order id and party, across replicas when they share Redis (client-order-ids.ts).
  const claims = app.fleet?.claims ?? new MemoryClaims();
  const admit = clientOrderAdmission(app.live, claims);
  const orderShape = bodyShape('POST /v1/orders', OrderBody);
  const placeOrderOptions = {
    engine,
    metrics,
    route: 'POST /v1/orders',
    signed: true,
    chargeParty,
    admit,
    shape: orderShape,
    amend: (res: EngineResponse) => explainEndedAtOnce(app.live, res),
  };
  const cancelOrderOptions = { engine, metrics, route: 'DELETE /v1/orders/:orderId', signed: true, chargeParty };
  const placeOrderCall = routeCall(placeOrderOptions);
  const cancelOrderCall = routeCall(cancelOrderOptions);
  const placeOrder = forwarder(placeOrderOptions);
  const cancelOrder = forwarder(cancelOrderOptions);
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
  await app.register(deskRoutes, { parts: desk });
  const clientOrder = (party: string, clientOrderId: string) => findClientOrder(app.live, app.db, party, clientOrderId);
  // The dead man's switch: every replica looks for due switches in the shared store (dead-mans-switch.ts).
  const fired = new Counter({
    name: 'bff_switch_cancels_total',
    help: 'Cancels sent by fired dead man\'s switches, by outcome (cancelled: the engine answered ok:true; refused: anything else, e.g. order_not_open)',
    labelNames: ['outcome'],
    registers: [app.metrics.registry],
  });
  const deadMansSwitch = new DeadMansSwitch({
    store: app.fleet?.switches ?? new MemorySwitchStore(),
    sessions,
    cancel: cancelOrderCall,
    chargeAddress: (ip) => budgets.address(ip),
    log: app.log,
    onFired: (f) => {
      for (const r of f.results) fired.inc({ outcome: r.code === null ? 'cancelled' : 'refused' });
    },
  });
  app.addHook('onReady', async () => deadMansSwitch.start());
  app.addHook('onClose', async () => deadMansSwitch.stop());
  if (slot) slot.calls = socketTrading({ placeOrder: placeOrderCall, cancelOrder: cancelOrderCall, budgets, desk, clientOrder, deadMansSwitch });
  const setTpsl = forwarder({ engine, metrics, route: 'POST /v1/tpsl', signed: true, chargeParty, shape: bodyShape('POST /v1/tpsl', TpslBody) });
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

  app.post('/v1/orders', {
    validatorCompiler: documentOnly,
    schema: {
      tags: ['trading'],
      summary: 'Place an order',
      operationId: 'placeOrder',
      description: `${SIGNED_NOTE} Accepted and rejected orders are both HTTP 200: check \`ok\`.`,
      security: SIGNED,
      body: OrderBody,
      response: { 200: OrderAnswer, ...PROXY_ERRORS, ...DUPLICATE_ORDER },
    },
    handler: (request, reply) => placeOrder(request, reply, canonicalTarget(request, '/v1/orders')),
  });

  app.delete('/v1/orders/:orderId', {
    schema: {
      tags: ['trading'],
      summary: 'Cancel an order',
      operationId: 'cancelOrder',
      description: `${SIGNED_NOTE} No body.`,
      security: SIGNED,
      params: CancelParams,
      response: { 200: CancelAnswer, ...errors(400, 401, 404, 413, 415, 429, 502, 503, 504) },
    },
    handler: (request, reply) => cancelOrder(request, reply, canonicalTarget(request, orderIdPath(request.params.orderId))),
  });

  app.post('/v1/tpsl', {
    validatorCompiler: documentOnly,
    schema: {
      tags: ['trading'],
      summary: 'Set or cancel take-profit / stop-loss on a position',
      operationId: 'setTpsl',
      description: `${SIGNED_NOTE} A leg set to null cancels that leg.`,
      security: SIGNED,
      body: TpslBody,
      response: { 200: TpslAnswer, ...PROXY_ERRORS },
    },
    handler: (request, reply) => setTpsl(request, reply, canonicalTarget(request, '/v1/tpsl')),
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
