// Signed, non-custodial trading proxy to the engine (spec §4 Trading, §5) and the testnet faucet.
// Both share one encapsulated rate limit (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS, keyed per party
// with a known session, else per IP; see trading/rate-limit.ts) that covers no other route.
import type { RoutePlugin } from '../app.js';
import { faucetRoutes } from './faucet.js';
import { registerRateLimit } from './trading/rate-limit.js';
import { tradingProxyRoutes } from './trading/routes.js';

export const tradingRoutes: RoutePlugin = async (app, { deps }) => {
  await registerRateLimit(app, deps.config, deps.sessions, deps.fleet?.redis ?? null);
  await app.register(tradingProxyRoutes, { deps });
  await app.register(faucetRoutes, { deps });
};
