// REST reads over the indexer database (docs/rest.md): one plugin per route family.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { vaultRoutes } from './reads/vault.js';
import { collateralRoutes } from './reads/collateral.js';
import { batchRoutes } from './reads/batches.js';
import { orderRoutes } from './reads/orders.js';
import { fillRoutes } from './reads/fills.js';
import { tradeRoutes } from './reads/trades.js';
import { positionRoutes } from './reads/positions.js';
import { triggerRoutes } from './reads/triggers.js';
import { balanceRoutes } from './reads/balance.js';
import { verificationRoutes } from './reads/verifications.js';
import { eventRoutes } from './reads/events.js';
import { marketRoutes } from './reads/markets.js';
import { candleRoutes } from './reads/candles.js';

const FAMILIES: FastifyPluginAsyncTypebox[] = [
  vaultRoutes,
  collateralRoutes,
  batchRoutes,
  orderRoutes,
  fillRoutes,
  tradeRoutes,
  positionRoutes,
  triggerRoutes,
  balanceRoutes,
  verificationRoutes,
  eventRoutes,
  marketRoutes,
  candleRoutes,
];

export const readRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const family of FAMILIES) await app.register(family);
};
