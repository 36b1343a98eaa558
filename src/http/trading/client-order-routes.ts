// An order by its client order id (docs/trading.md "Client order ids"): the lookup and its answer's
// shape, for the call `order.status` (src/http/calls/order-status.ts: its REST route and socket op).
// Where the order comes from, in order: the live path (the user channels' last word on it), the
// database mirror (ids the live path no longer holds, orders from before the gateway started), a
// claim still held (placed through a gateway, the engine's events not yet arrived: `pending`).
import { Type } from 'typebox';
import { orderByClientId } from '../../db/queries/orders.js';
import { ApiError } from '../errors.js';
import type { Database } from '../../db/database.js';
import type { ClientOrderLookup } from './client-order-ids.js';


export const ClientOrderAnswer = Type.Object(
  {
    source: Type.Union([Type.Literal('live'), Type.Literal('mirror')], {
      description: 'live: as the engine\'s events last told it (current); mirror: the database mirror (may lag the engine by its indexer)',
    }),
    order: Type.Object(
      {
        clientOrderId: Type.String(),
        orderId: Type.Union([Type.String(), Type.Null()], { description: 'null for a rejected order (the engine gave it no id)' }),
        status: Type.String({ description: 'open, partially_filled, filled, cancelled, rejected' }),
      },
      { additionalProperties: true, description: 'The order: market, side, type, price, size, filledSize, avgPrice, reason / code when it ended' },
    ),
  },
  { additionalProperties: false },
);

/** The order, from the live path, else the mirror; 404 `not_found` when neither knows it (REST and the socket's order.status). */
export async function findClientOrder(live: ClientOrderLookup | null, db: Database, party: string, clientOrderId: string) {
  const known = live?.clientOrder(party, clientOrderId) ?? null;
  if (known) return { source: 'live' as const, order: known };
  const row = await db.read(null, (sql) => orderByClientId(sql, party, clientOrderId), { needsV2: true });
  if (row) return { source: 'mirror' as const, order: { ...row, clientOrderId } };
  throw new ApiError('not_found', `no order of this party with clientOrderId ${JSON.stringify(clientOrderId)} is known`);
}
