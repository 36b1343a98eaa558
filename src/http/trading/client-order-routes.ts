// An order by its client order id (docs/trading.md "Client order ids"): the answer's shape and the
// mirror's part of the lookup, for the call `order.status` (src/http/calls/order-status.ts: its REST
// route and socket op). Where the order comes from, in order (client-order-ids.ts `find`, the same
// order the place route's 409 follows): the live path (the user channels' last word on it), a claim
// still held (placed through a gateway, its outcome not yet known: `pending`; or the order the
// claim settled into), the database mirror (ids the live path no longer holds, orders from before
// the gateway started).
import { Type } from 'typebox';
import { orderByClientId } from '../../db/queries/orders.js';
import type { Database } from '../../db/database.js';

export const ClientOrderAnswer = Type.Object(
  {
    source: Type.Union([Type.Literal('live'), Type.Literal('claim'), Type.Literal('mirror')], {
      description:
        'live: as the engine\'s events last told it (current); claim: a place of this id sent through a gateway whose events have not told yet (status `pending`: ask again by `settlesBy`; a retried place is refused 409 with the same order), or the order the engine answered for it; mirror: the database mirror (may lag the engine by its indexer)',
    }),
    order: Type.Object(
      {
        clientOrderId: Type.String(),
        orderId: Type.Union([Type.String(), Type.Null()], { description: 'null for a rejected order (the engine gave it no id) and while pending' }),
        status: Type.String({ description: 'open, partially_filled, filled, cancelled, rejected; pending while the order is on its way (its outcome not known yet)' }),
      },
      { additionalProperties: true, description: 'The order: market, side, type, price, size, filledSize, avgPrice, reason / code when it ended' },
    ),
    settlesBy: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'With status `pending`: the latest time the gateway settles it (the engine can no longer accept the signed place, plus a margin). Then the answer is the order, or 404 when the engine never placed it (the id is free again).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The mirror's order of the party by its client order id (null when it has none). */
export function mirrorClientOrder(db: Database) {
  return async (party: string, clientOrderId: string): Promise<object | null> =>
    (await db.read(null, (sql) => orderByClientId(sql, party, clientOrderId), { needsV2: true })) ?? null;
}
