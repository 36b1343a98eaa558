// Whose reads a request makes (db/read-share.ts, ADR 0380): the client address (`request.ip`, IPv6
// by /64) and the party of a `/v1/users/:party/...` route, set around the request's own work so
// every read it makes, however deep, takes that flow's turn of the database pool. Set at onRequest
// and again at preHandler: a body is parsed on the socket's events, whose callbacks do not carry it.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { addressGroup } from '../../client-address.js';
import { readingAs } from '../../db/read-share.js';
import type { Flow } from '../../fair-share.js';

function flowOf(request: FastifyRequest): Flow {
  const party = (request.params as { party?: unknown } | undefined)?.party;
  return { address: addressGroup(request.ip), party: typeof party === 'string' ? party : null };
}

export const readFlow = fp(
  async (app) => {
    // Made once per request; entered again after the body is parsed.
    const flows = new WeakMap<FastifyRequest, Flow>();
    app.addHook('onRequest', (request, _reply, done) => {
      const flow = flowOf(request);
      flows.set(request, flow);
      readingAs(flow, done);
    });
    app.addHook('preHandler', (request, _reply, done) => readingAs(flows.get(request) ?? flowOf(request), done));
  },
  { name: 'read-flow', fastify: '5.x' },
);
