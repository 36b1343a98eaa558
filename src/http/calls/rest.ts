// The REST adapter of the calls (docs/trading.md "One pipeline"): one route per call that declares
// one, its OpenAPI operation the declaration's schema, its handler the same three steps for every
// call: read the input from the request, run the pipeline, write what it answered.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { ApiError, fromDomainError } from '../errors.js';
import { EngineShareExhaustedError } from '../../engine/errors.js';
import { pacedRefusals } from '../trading/address-gate.js';
import { errors } from '../schemas.js';
import { sendPassed } from '../trading/relay.js';
import { strictBodyCompiler } from '../trading/strict-body.js';
import { TRADING_BODY_MAX_BYTES } from '../trading/body-shape.js';
import type { CallContext, CallResult, ClientCall, RestRoute } from './declaration.js';
import type { CallPipeline } from './pipeline.js';

/**
 * The target forwarded to the engine is built from validated parameters only, never taken from the
 * request line. The engine verifies the signature over the target as the client sent it, so the two
 * must be the same bytes: a target that is not that origin-form path (an absolute-form
 * `http://host/v1/orders`, a stray `?`, another percent-encoding) is refused, not rewritten.
 */
export function canonicalTarget(request: FastifyRequest, path: string): string {
  if (request.url !== path) {
    throw new ApiError('bad_request', `the request target must be exactly ${JSON.stringify(path)} (origin form, canonical encoding)`);
  }
  return path;
}

/**
 * Fastify does not validate the signed bodies: its Ajv would coerce (a number into a string) and
 * answer its own 400. They are checked by the verified-forward (trading/body-shape.ts), for REST and
 * the socket alike, on the raw bytes that are then forwarded unchanged.
 */
export const documentOnly = () => () => true;
export const PROXY_ERRORS = errors(400, 401, 413, 415, 429, 502, 503, 504);
export const SIGNED_NOTE =
  'Signed: headers `X-User`, `X-Session-Id`, `X-Session-Sig` (docs/engine.md "Signing"), forwarded unchanged with the raw body. ' +
  `A body that is not this request's shape (a field not listed, a number for a decimal string, a value outside an enum, a string over its length, more than ${TRADING_BODY_MAX_BYTES} bytes) ` +
  'is refused 400 `invalid_body` (with `field`) before anything is forwarded (docs/trading.md).';

/** A call heavier than one request rewrites what the limiter's onRequest hook wrote after its first unit. */
function weightedHeaders(reply: FastifyReply, ctx: CallContext): void {
  if (!ctx.addressLeft) return;
  void reply.header('ratelimit-remaining', ctx.addressLeft.remaining).header('ratelimit-reset', ctx.addressLeft.resetS);
}

function send(reply: FastifyReply, result: CallResult): FastifyReply | object {
  if ('relayed' in result) return sendPassed(result.relayed, reply);
  if ('value' in result) return result.value;
  throw new Error('a REST call answered nothing');
}

const VALIDATORS = {
  handler: documentOnly,
  strict: strictBodyCompiler,
  fastify: undefined,
} as const;

/** The body of the engine room's refusal of `calls` engine calls, as the error handler writes EngineShareExhaustedError's; made once per count. */
const roomRefusals = new Map<number, string>();
export function engineRoomRefusal(calls: number): string {
  let body = roomRefusals.get(calls);
  if (body === undefined) {
    body = JSON.stringify(fromDomainError(new EngineShareExhaustedError(calls))!.body());
    if (roomRefusals.size < 1_000) roomRefusals.set(calls, body);
  }
  return body;
}

/**
 * The engine room's door of a call that declares its engine calls (a batch; ADR 0365): right after
 * its body is parsed, before the body's checks, the charge of its weight and any signature check,
 * a call handing the engine more calls than the client address's share has room for is refused
 * whole, 429 `budget_exhausted` (`engine_calls`), with a body made once, a few refusals per turn of
 * the event loop (address-gate.ts pacedRefusals). An address flooding batches past its room was
 * refused only in the handler, each batch parsed, checked, charged and answered through an error
 * object first: bench:isolation's engine-pool burst. The pipeline checks again (the socket, and
 * what changed since).
 */
function engineRoomDoor(call: ClientCall<unknown>, route: RestRoute<unknown>, pipeline: CallPipeline, refuse: ReturnType<typeof pacedRefusals>) {
  const engineCalls = call.budget.engineCalls!;
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    const room = pipeline.parts?.desk.engineRoom?.(request.ip);
    if (room === undefined) return done();
    let calls = 0;
    try {
      calls = engineCalls(route.input(request));
    } catch {
      // Not a body its declaration can read: its checks refuse it.
    }
    if (calls > room) return refuse(reply, 429, engineRoomRefusal(calls));
    done();
  };
}

/** The routes of the calls of one scope (the trading scope, or the party scope's `/v1/users/:party/...`). */
export function callRoutes(pipeline: CallPipeline, scope: 'trading' | 'party'): FastifyPluginAsync {
  return async (app) => {
    const refuse = pacedRefusals();
    for (const call of pipeline.calls as readonly ClientCall<unknown>[]) {
      const route = call.route;
      if (!route || !call.rest || route.scope !== scope) continue;
      const validatorCompiler = VALIDATORS[route.validation];
      // The engine room's door first, then the call's own preValidation.
      const preValidation = [...(call.budget.engineCalls ? [engineRoomDoor(call, route, pipeline, refuse)] : []), ...(route.preValidation ? [route.preValidation] : [])];
      app.route({
        method: call.rest.method,
        url: call.rest.url,
        schema: route.schema as Record<string, TSchema>,
        ...(validatorCompiler ? { validatorCompiler } : {}),
        ...(preValidation.length > 0 ? { preValidation } : {}),
        handler: async (request, reply) => {
          const ctx: CallContext = { ip: request.ip, requestId: request.id, addressCharged: 1 };
          if (request.provenParty !== undefined) ctx.heldParty = request.provenParty;
          const result = await pipeline.run(call, route.input(request), ctx);
          weightedHeaders(reply, ctx);
          return route.send ? route.send(reply, result) : send(reply, result);
        },
      });
    }
  };
}
