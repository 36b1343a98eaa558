// Signed, non-custodial trading proxy to the engine (spec §4 Trading, §5).
import type { RoutePlugin } from '../app.js';

export const tradingRoutes: RoutePlugin = async () => {};
