// Request ids (docs/trading.md "Request ids"): a caller's `X-Request-Id` is kept when it is short and
// plain, so a front end or an edge proxy can follow one call through the logs; anything else is
// replaced by a fresh UUID. Fastify logs it with every line of the request (`reqId`); it is returned
// in `X-Request-Id` and the trading proxy forwards it to the engine.
import { randomUUID } from 'node:crypto';
import fp from 'fastify-plugin';

const PLAIN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`. */
export function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && PLAIN_ID.test(given) ? given : randomUUID();
}

export const requestIdHeader = fp(
  async (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      void reply.header('x-request-id', request.id);
      done(null, payload);
    });
  },
  { name: 'request-id', fastify: '5.x' },
);
