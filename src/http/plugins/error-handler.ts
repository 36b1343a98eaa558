// Every error becomes `{error, code}` with its status (docs/rest.md "Errors"): the gateway's own
// ApiErrors, validation failures (400), Fastify's client errors, unknown routes (404), and errors the
// router raises before any route runs (`routerErrors`, a Fastify constructor option). Stack traces
// and driver messages never reach a client.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { fromDomainError } from '../errors.js';
import { validationMessage } from '../validation.js';
import { allowedOrigin } from '../raw-error.js';

/** Codes of Fastify's own client errors, by status; anything else is bad_request. */
const CLIENT_ERROR_CODES: Record<number, string> = { 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type' };

/**
 * Errors raised by the router before any route runs (a path parameter over maxParamLength,
 * malformed percent-encoding): the same shape and CORS header as the rest, since the CORS plugin
 * has not run for them.
 */
export function routerErrors(corsOrigins: readonly string[]) {
  return (error: FastifyError, request: FastifyRequest, rawReply: unknown): void => {
    const reply = rawReply as FastifyReply;
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
    const origin = allowedOrigin(corsOrigins, request.headers.origin);
    if (origin) void reply.header('access-control-allow-origin', origin);
    void reply.code(status).send({
      error: status === 414 ? 'a path parameter is too long' : 'malformed request URL',
      code: 'bad_request',
    });
  };
}

export const errorHandler = fp(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      // The gateway's own errors and the data layer's domain errors (db/errors.ts), mapped at this edge.
      const known = fromDomainError(error);
      if (known) {
        if (known.status >= 500) request.log.warn({ code: known.code, url: request.url }, known.message);
        const retryAfterS = known.extra.retryAfterS;
        if (known.retryAfter !== undefined && !reply.hasHeader('retry-after')) void reply.header('retry-after', known.retryAfter);
        if (typeof retryAfterS === 'number' && !reply.hasHeader('retry-after')) void reply.header('retry-after', String(retryAfterS));
        return reply.code(known.status).send(known.body());
      }
      if (error.validation) {
        return reply.code(400).send({ error: validationMessage(error), code: 'bad_request' });
      }
      const status = error.statusCode ?? 500;
      if (status === 429) return reply.code(429).send({ error: error.message, code: 'rate_limited' });
      if (status >= 400 && status < 500) {
        // Fastify's own client errors: malformed JSON, unsupported media type, body too large, …
        return reply.code(status).send({ error: error.message, code: CLIENT_ERROR_CODES[status] ?? 'bad_request' });
      }
      request.log.error({ err: error, url: request.url }, 'unhandled error');
      return reply.code(500).send({ error: 'internal error', code: 'internal_error' });
    });

    app.setNotFoundHandler((request, reply) => {
      void reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
    });
  },
  { name: 'error-handler', fastify: '5.x' },
);
