// Forwarding of signed trading calls: only the three signing headers, the content type, the request
// id (not covered by the signature; for following a call through both logs) and the raw body travel
// to the engine, with the origin-form target the route built from validated parameters
// (routes.ts refuses a request whose target differs from it, so it is also exactly what the client
// signed). The body is not re-encoded, so the engine verifies the very bytes the session key signed.
// Cookies, origins and other client headers never reach the engine.
//
// Hot path: everything that depends only on the route (metric labels, signed or not, the answer
// hook) is fixed once when the route is registered (`forwarder`), so a call builds one small header
// object and one engine request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { engineTimeoutError, type EngineClient, type EngineResponse } from '../../engine/client.js';
import { addressGroup } from '../../client-address.js';
import { signedHeaders, type SignedHeaders } from '../../auth/signed-request.js';
import { within } from '../../deadline.js';
import { SharedRead } from '../../engine/shared-read.js';
import { judgeEngineAnswer, relayEngineAnswer, sendPassed, type PassedAnswer } from './relay.js';
import type { ProxyMetrics } from './metrics.js';
import type { BodyCheck } from './body-shape.js';

/** Forwards one call; `path` defaults to `request.url`, `body` to `request.rawBody`. */
export type Forwarder = (request: FastifyRequest, reply: FastifyReply, path?: string, body?: Buffer) => Promise<FastifyReply>;

/**
 * One call of a route, whatever carried it (a REST request, a socket message): the method the
 * client signed (and the engine gets), the target, the raw body, the signature (signed routes;
 * read from the three headers by `signedHeaders`, which refuses missing and repeated ones), and
 * the request id forwarded for the logs.
 */
export interface CallInput {
  method: string;
  target: string;
  body: Buffer | undefined;
  signature: SignedHeaders | null;
  requestId: string;
  /**
   * The client address the call came from (`request.ip`, the socket's): its engine call takes its
   * turn in that address's fair share of the pool (fair-share.ts). Absent: a call the
   * gateway makes itself (a fired switch's cancels), shared as the gateway's own.
   */
  address?: string;
  /**
   * The signature was verified and the party budget charged by the caller (a batch charges its
   * items once, by weight: batch.ts): the route does not verify or charge again.
   */
  precharged?: boolean;
  /** With `precharged`: the party the caller proved (null: none could be). */
  party?: string | null;
  /**
   * The route's admission, taken by the caller before (a cancel-replace claims its place's client
   * order id before sending its cancel: replace.ts); the route does not admit again, and settles it.
   */
  admitted?: Admitted | null;
}

/**
 * What a route checks once the party is known and before the engine is called (the client order
 * id of a place: client-order-ids.ts). Throws (or rejects) to refuse; the returned settle hears the
 * outcome. Null, not a promise, when there is nothing to admit: the call then reaches the engine
 * client without waiting for a microtask.
 */
export type Admit = (party: string | null, call: CallInput) => Promise<Admitted | null> | null;
export interface Admitted {
  /** The engine's answer as judged (null with the error when the call threw). */
  settle(answer: PassedAnswer | null, error?: unknown): void;
  /** The call will not be sent after all (a cancel-replace whose cancel failed): frees what admitting it took. */
  release(): Promise<void>;
}

/**
 * The one verified-forward of a route (REST and the socket both call it): spends the party's
 * budget once the gateway has verified the signature (the same verifier, replay memory and
 * counters), forwards exactly the signing headers, the content type and the raw body, and judges
 * the engine's answer (relay.ts): the answer the client sees, or a throw of the ApiError it sees.
 */
export type RouteCall = (call: CallInput) => Promise<PassedAnswer>;

export interface RouteOptions {
  engine: EngineClient;
  metrics: ProxyMetrics;
  route: string;
  signed: boolean;
  onAnswer?: (call: CallInput, res: EngineResponse) => void;
  /** A 2xx answer the route adds to (null: relayed as is, byte for byte). */
  amend?: (res: EngineResponse) => Promise<Buffer | null>;
  /**
   * Public, bodiless GETs only: identical concurrent requests share one engine call that started
   * after they arrived (shared-read.ts). Requires `path` to be the normalised target.
   */
  shareReads?: boolean;
  /**
   * With shared reads: a request's own bound (ENGINE_TIMEOUT_MS). One that waits behind a hanging
   * call would otherwise wait for that call's timeout and then for its own call's.
   */
  deadlineMs?: number;
  /** Signed routes: spends the party's rate-limit budget when the gateway can verify the signature (signed with `method`); the party, or null. */
  chargeParty?: (signature: SignedHeaders, method: string, target: string, body: Buffer) => Promise<string | null>;
  admit?: Admit;
  /** The method sent to the engine (and signed by the client) when it is not the request's: POST /v1/user/me → GET. */
  engineMethod?: 'GET';
  /** The body's shape check (body-shape.ts): a throw refuses the call before anything else is done. */
  shape?: BodyCheck;
}

/** The verified-forward of one route, with its route-constant parts bound once. */
export function routeCall(options: RouteOptions): RouteCall {
  const { engine, signed, onAnswer } = options;
  const timer = options.metrics.route(options.route);
  return async (call) => {
    let headers: Record<string, string>;
    let party: string | null = null;
    const body = call.body;
    options.shape?.(body);
    if (signed) {
      const s = call.signature;
      // The REST adapter and the socket read the signature with signedHeaders, which refuses a missing one (401).
      if (!s) throw new Error(`${options.route}: a signed route was called without a signature`);
      headers = { 'x-user': s.user, 'x-session-id': s.sessionId, 'x-session-sig': s.sig, 'x-request-id': call.requestId };
      party = call.precharged ? (call.party ?? null) : ((await options.chargeParty?.(s, call.method, call.target, body ?? Buffer.alloc(0))) ?? null);
    } else {
      headers = { 'x-request-id': call.requestId };
    }
    const hasBody = body !== undefined && body.length > 0;
    if (hasBody) headers['content-type'] = 'application/json';
    // Taken by the caller (replace.ts), or admitted here; null without a promise when nothing to admit.
    const admission = call.admitted !== undefined ? call.admitted : options.admit ? options.admit(party, call) : null;
    const admitted = admission === null || !(admission instanceof Promise) ? admission : await admission;
    const start = performance.now();
    let outcome = 'transport_error';
    try {
      // Each call, a batch's items included, takes its own turn in its address's share of the pool.
      const flow = call.address === undefined ? undefined : { address: addressGroup(call.address), party };
      const res = await engine.request({ method: call.method as Dispatcher.HttpMethod, path: call.target, headers, body: hasBody ? body : null, ...(flow ? { flow } : {}) });
      outcome = String(res.status);
      onAnswer?.(call, res);
      let answer: PassedAnswer;
      if (options.amend && res.status >= 200 && res.status < 300) {
        const amended = await options.amend(res);
        answer = judgeEngineAnswer(amended ? { ...res, body: amended } : res);
      } else {
        answer = judgeEngineAnswer(res);
      }
      admitted?.settle(answer);
      return answer;
    } catch (err) {
      admitted?.settle(null, err);
      throw err;
    } finally {
      timer.observe(outcome, (performance.now() - start) / 1000);
    }
  };
}

/** The REST form of a route: the call read from the request, the answer written to the reply. */
export function forwarder(options: RouteOptions): Forwarder {
  const { engine, signed, onAnswer } = options;
  const shared = options.shareReads
    ? new SharedRead<EngineResponse>(
        (path) => engine.request({ method: 'GET', path, headers: {}, body: null }),
        (saved) => options.metrics.sharedReads.inc({ route: options.route }, saved),
      )
    : null;
  if (shared) {
    if (signed) throw new Error('shared reads are for public routes only');
    if (onAnswer) throw new Error('shared reads relay the answer as is (no onAnswer)');
    const timer = options.metrics.route(options.route);
    return async (request, reply, path) => {
      const start = performance.now();
      let outcome = 'transport_error';
      try {
        const pending = shared.read(path ?? request.url);
        const res = options.deadlineMs === undefined ? await pending : await within(pending, options.deadlineMs, engineTimeoutError);
        outcome = String(res.status);
        return relayEngineAnswer(res, reply);
      } finally {
        timer.observe(outcome, (performance.now() - start) / 1000);
      }
    };
  }
  const call = routeCall(options);
  return async (request, reply, path, rawBody) => {
    // 401 when a header is missing, 400 when one is duplicated: the engine never sees either.
    const signature = signed ? signedHeaders(request) : null;
    const answer = await call({
      method: options.engineMethod ?? request.method,
      target: path ?? request.url,
      body: rawBody ?? request.rawBody,
      signature,
      requestId: request.id,
      address: request.ip,
    });
    return sendPassed(answer, reply);
  };
}
