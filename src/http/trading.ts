// Signed, non-custodial trading proxy to the engine (docs/trading.md) and the testnet faucet.
// Both share one encapsulated rate limit that covers no other route: every request per client IP
// (RATE_LIMIT_IP_MAX), and verified signed requests per party as well (RATE_LIMIT_MAX); see
// trading/rate-limit.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { faucetRoutes } from './faucet.js';
import { redisRateLimitOptions } from '../fleet/rate-limit-store.js';
import { chargeProvenParty, registerRateLimit } from './trading/rate-limit.js';
import { partyScope } from './party-scope.js';
import { tradingProxyRoutes } from './trading/routes.js';
import { clientOrderRoutes } from './trading/client-order-routes.js';
import type { TradingSlot } from './trading/socket-calls.js';

export const tradingRoutes: FastifyPluginAsyncTypebox<{ slot?: TradingSlot }> = async (app, { slot }) => {
  const budgets = await registerRateLimit(app, app.config, app.fleet ? redisRateLimitOptions(app.fleet.redis) : {});
  // The slot receives the socket form of place/cancel (the stream's order messages).
  await app.register(tradingProxyRoutes, slot ? { budgets, slot } : { budgets });
  // The faucet is a party route: guarded by the party scope, then charged to the proven party.
  await app.register(partyScope, { routes: [faucetRoutes, clientOrderRoutes], afterGuards: chargeProvenParty(budgets.party) });
};
