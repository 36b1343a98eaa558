// A test-only gateway with two tiny party-scoped routes, so the guards can be exercised without
// depending on the read routes another engineer is writing. Built exactly like the real app
// (loadConfig → createDeps → buildApp); the extra routes are registered in the party scope before
// `ready()`, so the guards apply to them as to every `/v1/users/:party/...` route.
import pino from 'pino';
import { Type } from 'typebox';
import { buildApp, type App, type AppDeps } from '../../../src/app.js';
import { loadConfig } from '../../../src/config/env.js';
import { closeDeps, createDeps } from '../../../src/deps.js';
import { Metrics } from '../../../src/metrics.js';
import { PartyParams } from '../../../src/http/schemas.js';
import { partyScope } from '../../../src/http/party-scope.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

export interface GuardApp {
  app: App;
  deps: AppDeps;
  url: string;
  close(): Promise<void>;
}

export async function startGuardApp(env: Record<string, string | undefined>): Promise<GuardApp> {
  const config = loadConfig({ ENGINE_BASE_URL: 'http://127.0.0.1:9', ...env });
  const deps = createDeps(config, { logger: pino({ level: 'silent' }), metrics: new Metrics({ defaultMetrics: false }) });
  const app = await buildApp(deps);
  const routes: FastifyPluginAsyncTypebox = async (scope) => {
    scope.get('/v1/users/:party/ping', { schema: { params: PartyParams, querystring: Type.Object({ limit: Type.Optional(Type.Integer()) }) } }, async (request) => ({
      party: request.params.party,
      proven: request.provenParty ?? null,
    }));
    scope.post('/v1/users/:party/echo', { schema: { params: PartyParams } }, async (request) => ({ proven: request.provenParty ?? null, body: request.body ?? null }));
  };
  await app.register(partyScope, { routes: [routes] });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    deps,
    url,
    async close() {
      await app.close();
      await closeDeps(deps);
    },
  };
}
