// The party routes (`/v1/users/:party/...`, docs/trading.md "Signing") live in one encapsulated
// scope: every route registered inside it gets the authenticate guard (the request's signature
// proves a party: auth/signed-request.ts) and the own-party guard (the proven party is the path's
// :party), as hooks of the scope, not by matching URLs. A route registered in the scope that is not
// a party route fails at start-up, so a scope cannot guard the wrong routes by mistake.
//
// With AUTH_DISABLED=true both guards are off (the OpenAPI document still marks the routes signed,
// so a client generated from a development stack knows what production asks for).
import type { FastifyPluginAsync, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuthError } from '../auth/errors.js';
import { provenParty, signedHeaders } from '../auth/signed-request.js';
import { addressGroup } from '../client-address.js';
import { errors } from './schemas.js';

/** The statuses the two guards answer on any party route. */
const GUARD_STATUSES = [400, 401, 403, 429, 503] as const;

export const PARTY_ROUTE_PREFIX = '/v1/users/:party';

declare module 'fastify' {
  interface FastifyRequest {
    /** The party whose signature this request carried, once the authenticate guard passed. */
    provenParty?: string;
  }
}

export interface PartyScopeOptions {
  /** The route plugin(s) registered inside the scope. */
  routes: readonly FastifyPluginAsyncTypebox[];
  /** Runs after both guards on every route of the scope (the trading scope's party budget). */
  afterGuards?: preHandlerAsyncHookHandler;
}

export const partyScope: FastifyPluginAsync<PartyScopeOptions> = async (app, { routes, afterGuards }) => {
  const { config, sessions, replays } = app;

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(PARTY_ROUTE_PREFIX)) throw new Error(`${route.method} ${route.url} is in the party scope but is not a ${PARTY_ROUTE_PREFIX} route`);
    if (route.schema && !route.schema.hide) {
      route.schema.security = [{ xUser: [], xSessionId: [], xSessionSig: [] }];
      // What the guards themselves answer, whatever the route: 400 (a repeated header), 401, 403,
      // 429 `budget_exhausted` (a session lookup past SESSION_LOOKUPS_PER_IP), 503 (database, replay memory).
      const response = route.schema.response as Record<number, unknown> | undefined;
      if (response) for (const [status, schema] of Object.entries(errors(...GUARD_STATUSES))) response[Number(status)] ??= schema;
    }
  });

  if (!config.authDisabled) {
    app.addHook('preHandler', async (request: FastifyRequest) => {
      request.provenParty = await provenParty(sessions, replays, {
        method: request.method,
        target: request.url,
        body: request.rawBody ?? '',
        headers: signedHeaders(request),
        // A session this process does not hold is read from the database: charged to the address (work-budgets.ts).
        beforeLookup: () => app.workBudgets.spend('session_lookups', addressGroup(request.ip)),
      });
    });
    app.addHook('preHandler', async (request: FastifyRequest) => {
      const party = (request.params as { party?: string }).party;
      if (request.provenParty !== party) throw new AuthError('forbidden', 'X-User must equal the :party of the path');
    });
  }
  if (afterGuards) app.addHook('preHandler', afterGuards);

  for (const plugin of routes) await app.register(plugin);
};
