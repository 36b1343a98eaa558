// Forwarding of signed trading calls: only the three signing headers, the content type and the raw
// body travel to the engine, with the request target exactly as the client signed it
// (`request.url`, path plus query). Nothing is re-encoded, so the engine verifies the very bytes
// the session key signed. Cookies, origins and other client headers never reach the engine.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { EngineClient, EngineResponse } from '../../engine/client.js';
import { signedHeaders } from '../../auth/guards.js';
import { relayEngineAnswer } from './relay.js';
import type { ProxyMetrics } from './metrics.js';

export interface ForwardOptions {
  engine: EngineClient;
  metrics: ProxyMetrics;
  /** Route label for metrics, e.g. "POST /v1/orders". */
  route: string;
  /** Body to send; defaults to the raw body Fastify's JSON parser kept. */
  body?: Buffer;
  /** false for public routes (no signing headers are required or forwarded). */
  signed: boolean;
  /** Engine path; defaults to `request.url` (what the client signed). */
  path?: string;
  /** Sees every engine answer before it is relayed (e.g. to learn a new session). */
  onAnswer?: (res: EngineResponse) => void;
}

export async function forward(request: FastifyRequest, reply: FastifyReply, options: ForwardOptions): Promise<FastifyReply> {
  const headers: Record<string, string> = {};
  if (options.signed) {
    // 401 when a header is missing, 400 on a duplicated X-User: the engine never sees either.
    const signed = signedHeaders(request);
    headers['x-user'] = signed.user;
    headers['x-session-id'] = signed.sessionId;
    headers['x-session-sig'] = signed.sig;
  }
  const body = options.body ?? request.rawBody;
  if (body && body.length > 0) headers['content-type'] = 'application/json';
  const stop = options.metrics.duration.startTimer({ route: options.route });
  let outcome = 'transport_error';
  try {
    const res = await options.engine.request({
      method: request.method as Dispatcher.HttpMethod,
      path: options.path ?? request.url,
      headers,
      body: body && body.length > 0 ? body : null,
    });
    outcome = String(res.status);
    options.onAnswer?.(res);
    return relayEngineAnswer(res, reply);
  } finally {
    stop({ outcome });
  }
}
