// The authenticate and own-party guards of every `/v1/users/:party/...` route (docs/trading.md).
// They are attached by an onRoute hook, so a route plugin only has to live under that prefix.
// With AUTH_DISABLED=true both are no-ops (the OpenAPI document still marks the routes signed, so a
// client generated from a development stack knows what production asks for).
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { AuthError } from './errors.js';
import { provenParty, signedHeaders } from './signed-request.js';

export const PARTY_ROUTE_PREFIX = '/v1/users/:party';

declare module 'fastify' {
  interface FastifyRequest {
    /** The party whose signature this request carried, once the authenticate guard passed. */
    provenParty?: string;
  }
}

/** Adds both guards to every route under PARTY_ROUTE_PREFIX registered after it (an onRoute hook). */
export const authGuards = fp(async (app) => {
  const { config, sessions, replays } = app;

  const authenticate: preHandlerAsyncHookHandler = async (request: FastifyRequest) => {
    const headers = signedHeaders(request);
    request.provenParty = await provenParty(sessions, replays, {
      method: request.method,
      target: request.url,
      body: request.rawBody ?? '',
      headers,
    });
  };

  const ownParty: preHandlerAsyncHookHandler = async (request: FastifyRequest, _reply: FastifyReply) => {
    const party = (request.params as { party?: string }).party;
    if (request.provenParty !== party) throw new AuthError('forbidden', 'X-User must equal the :party of the path');
  };

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(PARTY_ROUTE_PREFIX)) return;
    if (route.schema && !route.schema.hide) {
      route.schema.security = [{ xUser: [], xSessionId: [], xSessionSig: [] }];
    }
    if (config.authDisabled) return;
    const existing = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [authenticate, ownParty, ...existing];
  });
}, { name: 'auth-guards', fastify: '5.x', dependencies: ['dependencies'] });
