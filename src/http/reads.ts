// REST reads over the indexer database (docs/rest.md): one plugin per route family, and its party
// routes (if any) in the party scope, which guards them (party-scope.ts). Families keep their order
// (the OpenAPI document lists paths in registration order).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { vaultRoutes } from './reads/vault.js';
import { collateralRoutes, userCollateralRoutes } from './reads/collateral.js';
import { batchRoutes, userBatchRoutes } from './reads/batches.js';
import { orderRoutes, userOrderRoutes } from './reads/orders.js';
import { fillRoutes, userFillRoutes } from './reads/fills.js';
import { tradeRoutes } from './reads/trades.js';
import { positionRoutes } from './reads/positions.js';
import { triggerRoutes } from './reads/triggers.js';
import { balanceRoutes } from './reads/balance.js';
import { accountRoutes } from './reads/account.js';
import { pnlRoutes } from './reads/pnl.js';
import { verificationRoutes } from './reads/verifications.js';
import { eventRoutes } from './reads/events.js';
import { marketRoutes } from './reads/markets.js';
import { candleRoutes } from './reads/candles.js';
import { proofRoutes } from './reads/proofs.js';
import { partyScope } from './party-scope.js';

/** Each family: its public routes, then its party routes. */
const FAMILIES: Array<{ routes?: FastifyPluginAsyncTypebox; partyRoutes?: FastifyPluginAsyncTypebox }> = [
  { routes: vaultRoutes },
  { routes: collateralRoutes, partyRoutes: userCollateralRoutes },
  { routes: batchRoutes, partyRoutes: userBatchRoutes },
  { routes: orderRoutes, partyRoutes: userOrderRoutes },
  { routes: fillRoutes, partyRoutes: userFillRoutes },
  { routes: tradeRoutes },
  { partyRoutes: positionRoutes },
  { partyRoutes: triggerRoutes },
  { partyRoutes: balanceRoutes },
  { partyRoutes: accountRoutes },
  { partyRoutes: pnlRoutes },
  { routes: verificationRoutes },
  { routes: eventRoutes },
  { routes: marketRoutes },
  { routes: candleRoutes },
  { partyRoutes: proofRoutes },
];

export const readRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const family of FAMILIES) {
    if (family.routes) await app.register(family.routes);
    if (family.partyRoutes) await app.register(partyScope, { routes: [family.partyRoutes] });
  }
};
