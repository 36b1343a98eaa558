// Turns an engine answer into the gateway's answer. The proxy is transparent for everything the
// engine means as an answer to the client (2xx JSON, including HTTP 200 `ok:false` rejections with
// any code, `0x0C` included; and 4xx JSON errors that already carry `error` + `code`), and
// translates everything that means "the engine is broken" (5xx, HTML pages, non-JSON bodies) into
// the gateway's own JSON 502 so a browser sees a readable, CORS-enabled error instead of an
// opaque cross-origin failure (docs/rest.md rule 4).
import type { FastifyReply } from 'fastify';
import { parseJson, type EngineResponse } from '../../engine/client.js';
import { ApiError, type ErrorCode } from '../errors.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** Gateway codes for the engine's transport-level 4xx statuses (docs/engine.md "HTTP API" "Failures"). */
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  429: 'rate_limited',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A 2xx JSON answer is relayed without being parsed (the hot path of every order): it is trusted
 * when the engine labels it JSON and it is framed as an object. Anything else is parsed and judged.
 */
function framedAsJsonObject(res: EngineResponse): boolean {
  const type = res.headers['content-type'];
  if (typeof type !== 'string' || !type.includes('json')) return false;
  const body = res.body;
  let first = 0;
  while (first < body.length && body[first]! <= 0x20) first++;
  let last = body.length - 1;
  while (last > first && body[last]! <= 0x20) last--;
  return body[first] === 0x7b && body[last] === 0x7d; // { … }
}

/** An engine answer the client is to see: its status, the body bytes, and the engine's Retry-After when it had one. */
export interface PassedAnswer {
  status: number;
  body: Buffer;
  retryAfter?: string;
}

/**
 * The judgement of an engine answer, for REST and the socket alike: the answer the client sees
 * (status + the engine's bytes), or a throw of the ApiError it sees instead.
 */
export function judgeEngineAnswer(res: EngineResponse): PassedAnswer {
  const { status } = res;
  if (status >= 200 && status < 300 && framedAsJsonObject(res)) return { status, body: res.body };
  const json = parseJson(res.body);
  if (status >= 200 && status < 300) {
    if (!isObject(json)) {
      throw new ApiError('engine_unavailable', 'the engine answered with a body that is not a JSON object', { engineStatus: status });
    }
    // Byte for byte: the client sees exactly what the engine said.
    return { status, body: res.body };
  }
  if (status >= 400 && status < 500 && isObject(json)) {
    const retryAfter = res.headers['retry-after'];
    if (typeof json.error === 'string' && typeof json.code === 'string') {
      // Already the gateway error shape (plus the engine's `ok:false`): pass it through.
      return typeof retryAfter === 'string' ? { status, body: res.body, retryAfter } : { status, body: res.body };
    }
    const code = CODE_FOR_STATUS[status] ?? 'bad_request';
    const message = typeof json.error === 'string' ? json.error : `the engine refused the request (HTTP ${status})`;
    const refusal = new ApiError(code, message, { engineStatus: status }, status);
    if (typeof retryAfter === 'string') refusal.retryAfter = retryAfter;
    throw refusal;
  }
  const what = json === undefined ? 'a non-JSON body' : 'an error';
  throw new ApiError('engine_unavailable', `the engine answered HTTP ${status} with ${what}`, { engineStatus: status });
}

/** Sends a passed answer as the REST reply. */
export function sendPassed(answer: PassedAnswer, reply: FastifyReply): FastifyReply {
  if (answer.retryAfter !== undefined) void reply.header('retry-after', answer.retryAfter);
  return reply.code(answer.status).type(JSON_TYPE).send(answer.body);
}

/** Sends the engine's answer (status + body bytes) or throws the ApiError the client should see. */
export function relayEngineAnswer(res: EngineResponse, reply: FastifyReply): FastifyReply {
  return sendPassed(judgeEngineAnswer(res), reply);
}
