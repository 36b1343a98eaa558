// Signed, non-custodial trading proxy to the engine (spec §4 Trading, §5) and the testnet faucet.
// Both share one encapsulated rate limit (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS, keyed per party
// with a known session, else per IP; see trading/rate-limit.ts) that covers no other route.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { faucetRoutes } from './faucet.js';
import { registerRateLimit } from './trading/rate-limit.js';
import { tradingProxyRoutes } from './trading/routes.js';

export const tradingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await registerRateLimit(app, app.config, app.sessions);
  await app.register(tradingProxyRoutes);
  await app.register(faucetRoutes);
};
