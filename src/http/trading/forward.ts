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
import { signedHeaders, type SignedHeaders } from '../../auth/signed-request.js';
import { within } from '../../deadline.js';
import { SharedRead } from '../../engine/shared-read.js';
import { relayEngineAnswer } from './relay.js';
import type { ProxyMetrics } from './metrics.js';

/** Forwards one call; `path` defaults to `request.url`, `body` to `request.rawBody`. */
export type Forwarder = (request: FastifyRequest, reply: FastifyReply, path?: string, body?: Buffer) => Promise<FastifyReply>;

/** The forwarder of one route, with its route-constant parts bound once. */
export function forwarder(options: {
  engine: EngineClient;
  metrics: ProxyMetrics;
  route: string;
  signed: boolean;
  onAnswer?: (request: FastifyRequest, res: EngineResponse) => void;
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
  /** Signed routes: spends the party's rate-limit budget when the gateway can verify the signature (signed with `method`). */
  chargeParty?: (request: FastifyRequest, headers: SignedHeaders, body: Buffer, method: string) => Promise<void>;
  /** The method sent to the engine (and signed by the client) when it is not the request's: POST /v1/user/me → GET. */
  engineMethod?: 'GET';
}): Forwarder {
  const { engine, signed, onAnswer } = options;
  const timer = options.metrics.route(options.route);
  const shared = options.shareReads
    ? new SharedRead<EngineResponse>(
        (path) => engine.request({ method: 'GET', path, headers: {}, body: null }),
        (saved) => options.metrics.sharedReads.inc({ route: options.route }, saved),
      )
    : null;
  if (shared) {
    if (signed) throw new Error('shared reads are for public routes only');
    if (onAnswer) throw new Error('shared reads relay the answer as is (no onAnswer)');
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
  return async (request, reply, path, rawBody) => {
    let headers: Record<string, string>;
    const body = rawBody ?? request.rawBody;
    if (signed) {
      // 401 when a header is missing, 400 when one is duplicated: the engine never sees either.
      const s = signedHeaders(request);
      headers = { 'x-user': s.user, 'x-session-id': s.sessionId, 'x-session-sig': s.sig, 'x-request-id': request.id };
      await options.chargeParty?.(request, s, body ?? Buffer.alloc(0), options.engineMethod ?? request.method);
    } else {
      headers = { 'x-request-id': request.id };
    }
    const hasBody = body !== undefined && body.length > 0;
    if (hasBody) headers['content-type'] = 'application/json';
    const start = performance.now();
    let outcome = 'transport_error';
    try {
      const res = await engine.request({
        method: (options.engineMethod ?? request.method) as Dispatcher.HttpMethod,
        path: path ?? request.url,
        headers,
        body: hasBody ? body : null,
      });
      outcome = String(res.status);
      onAnswer?.(request, res);
      if (options.amend && res.status >= 200 && res.status < 300) {
        const amended = await options.amend(res);
        if (amended) return relayEngineAnswer({ ...res, body: amended }, reply);
      }
      return relayEngineAnswer(res, reply);
    } finally {
      timer.observe(outcome, (performance.now() - start) / 1000);
    }
  };
}
