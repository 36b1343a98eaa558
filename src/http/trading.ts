// Signed, non-custodial trading proxy to the engine (docs/trading.md), the client calls' REST routes
// (src/http/calls/) and the testnet faucet.
// Both share one encapsulated rate limit that covers no other route: every request per client IP
// (RATE_LIMIT_IP_MAX), and verified signed requests per party as well (RATE_LIMIT_MAX); see
// trading/rate-limit.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { faucetRoutes } from './faucet.js';
import { redisRateLimitOptions } from '../fleet/rate-limit-store.js';
import { chargeProvenParty, registerRateLimit } from './trading/rate-limit.js';
import { partyScope } from './party-scope.js';
import { tradingProxyRoutes } from './trading/routes.js';
import { callRoutes } from './calls/rest.js';
import { installAddressGate } from './trading/address-gate.js';
import type { CallPipeline } from './calls/pipeline.js';

export const tradingRoutes: FastifyPluginAsyncTypebox<{ calls: CallPipeline }> = async (app, { calls }) => {
  // First: past its bound of requests in progress an address is refused before anything else runs.
  installAddressGate(app, app.config.tradingAddressInProgress);
  const budgets = await registerRateLimit(app, app.config, app.fleet ? redisRateLimitOptions(app.fleet.redis) : {});
  // Gives the pipeline its parts (the verified-forwards, the desk, the switch), and registers the proxy's other routes.
  await app.register(tradingProxyRoutes, { budgets, calls });
  // The REST routes of the client calls (src/http/calls/), each charged and run by the pipeline.
  await app.register(callRoutes(calls, 'trading'));
  // The party calls' routes are guarded by the party scope; the pipeline charges the proven party.
  await app.register(partyScope, { routes: [callRoutes(calls, 'party')] });
  // The faucet is a party route: guarded by the party scope, then charged to the proven party.
  await app.register(partyScope, { routes: [faucetRoutes], afterGuards: chargeProvenParty(budgets.party) });
};
