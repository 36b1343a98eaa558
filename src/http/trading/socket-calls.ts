// Order placement and cancellation over the stream socket (docs/trading.md "Over the socket"): the
// very verified-forward of the REST routes (forward.ts `routeCall`), given what the socket message
// carries instead of a request. What differs from REST is only how the call arrives:
//
//   REST                                   socket message
//   per-address budget: onRequest hook     per-address budget: charged here, first, the same counter
//   signing headers (signedHeaders)        `user`, `sessionId`, `sig` read by the same signedHeaders
//   body: the app's JSON parser            `body`: must be JSON too (400 `bad_request` otherwise)
//   target: the request line, canonical    target: built here (`/v1/orders`, orderIdPath), as the REST routes build it
//
// Then the same signature verdict, replay memory, party budget, engine call, outcome reason and
// answer judgement: a request signed for REST is accepted once, by whichever path comes first.
import { signedHeaders, type SignedHeaders } from '../../auth/signed-request.js';
import { parseJson } from '../../engine/client.js';
import { ApiError } from '../errors.js';
import type { RouteCall } from './forward.js';
import type { TradingBudgets } from './rate-limit.js';
import type { PassedAnswer } from './relay.js';
import { orderIdPath } from './targets.js';
import { runBatch, type BatchRequest, type BatchResult, type DeskParts } from './batch.js';
import type { ArmRequest, DeadMansSwitch } from './dead-mans-switch.js';
import type { ReplaceBody } from '../../contracts/desk.js';
import { runReplace, type ReplaceResult } from './replace.js';
import type { MessageSignature } from '../../stream/client-messages.js';

export interface SocketCallContext {
  /** The client address, as the REST routes' budget keys it. */
  ip: string;
  /** Forwarded to the engine as X-Request-Id (for following the call through both logs). */
  requestId: string;
}

export interface SocketTrading {
  placeOrder(body: string, signature: MessageSignature, ctx: SocketCallContext): Promise<PassedAnswer>;
  cancelOrder(orderId: string, signature: MessageSignature, ctx: SocketCallContext): Promise<PassedAnswer>;
  /** `order.batch`: the REST batch's core (batch.ts), the address budget charged the whole weight here. */
  batch(request: BatchRequest, ctx: SocketCallContext): Promise<BatchResult>;
  /** `order.replace`: the REST cancel-replace's core (replace.ts). */
  replace(request: ReplaceBody, ctx: SocketCallContext): Promise<ReplaceResult>;
  /**
   * `order.status`: the REST route's lookup (client-order-routes.ts), charged as the REST route is
   * (a request of the address budget, then of the party's); the caller checked the connection holds the party.
   */
  clientOrder(party: string, clientOrderId: string, ctx: SocketCallContext): Promise<unknown>;
  /** The dead man's switch (dead-mans-switch.ts); the caller checked the connection holds the party. */
  switchArm(request: ArmRequest, ctx: SocketCallContext): Promise<unknown>;
  switchHeartbeat(party: string, name: string, ctx: SocketCallContext): Promise<unknown>;
  switchDisarm(party: string, name: string, ctx: SocketCallContext): Promise<unknown>;
}

/**
 * Where the trading routes leave their socket form for the stream routes (both are plugins of the
 * app, encapsulated apart): set when the trading routes are registered, read per message.
 */
export class TradingSlot {
  calls: SocketTrading | null = null;
}

/** The signature read exactly as REST reads the signing headers: missing → 401, the same messages. */
function readSignature(s: MessageSignature): SignedHeaders {
  const headers: Record<string, string> = {};
  if (s.user !== undefined) headers['x-user'] = s.user;
  if (s.sessionId !== undefined) headers['x-session-id'] = s.sessionId;
  if (s.sig !== undefined) headers['x-session-sig'] = s.sig;
  return signedHeaders({ headers });
}

export function socketTrading(parts: {
  placeOrder: RouteCall;
  cancelOrder: RouteCall;
  budgets: TradingBudgets;
  desk: DeskParts;
  clientOrder: (party: string, clientOrderId: string) => Promise<unknown>;
  deadMansSwitch: DeadMansSwitch;
}): SocketTrading {
  const dms = parts.deadMansSwitch;
  return {
    async clientOrder(party, clientOrderId, ctx) {
      // Uncharged, a lookup the live path misses is a database read at the connection's message rate.
      await parts.budgets.address(ctx.ip);
      await parts.budgets.party(party);
      return parts.clientOrder(party, clientOrderId);
    },
    // Called as the message arrives (the switch applies one switch's calls in arrival order) and charged there.
    switchArm: (request, ctx) => dms.arm(request, ctx.ip),
    switchHeartbeat: (party, name, ctx) => dms.heartbeat(party, name, ctx.ip),
    switchDisarm: (party, name, ctx) => dms.disarm(party, name, ctx.ip),
    batch: (request, ctx) => runBatch(parts.desk, { ...ctx, addressCharged: 0 }, request),
    replace: (request, ctx) => runReplace(parts.desk, { ...ctx, addressCharged: 0 }, request),
    async placeOrder(body, signature, ctx) {
      await parts.budgets.address(ctx.ip);
      // In the order REST judges them: the body is parsed before the handler reads the headers.
      const bytes = Buffer.from(body, 'utf8');
      if (bytes.length === 0) throw new ApiError('bad_request', 'body is required: the signed order JSON');
      if (parseJson(bytes) === undefined) throw new ApiError('bad_request', 'request body is not valid JSON');
      const signed = readSignature(signature);
      return parts.placeOrder({ method: 'POST', target: '/v1/orders', body: bytes, signature: signed, requestId: ctx.requestId, address: ctx.ip });
    },
    async cancelOrder(orderId, signature, ctx) {
      await parts.budgets.address(ctx.ip);
      const signed = readSignature(signature);
      return parts.cancelOrder({ method: 'DELETE', target: orderIdPath(orderId), body: undefined, signature: signed, requestId: ctx.requestId, address: ctx.ip });
    },
  };
}
