// An order of a party by its client order id: GET /v1/users/:party/orders/by-client-id/:clientOrderId
// (a party route: signed, guarded by the party scope) and the socket's `order.status` (the
// connection must hold the party). Charged a request of the address budget and one of the party's.
import { Type } from 'typebox';
import { ClientOrderId, Party } from '../../contracts/wire.js';
import { MessageIdField } from '../../stream/message-schemas.js';
import { errors, PartyParams } from '../schemas.js';
import { SIGNED } from '../trading/schemas.js';
import { ClientOrderAnswer } from '../trading/client-order-routes.js';
import { declareCall } from './declaration.js';

export const OrderStatusOp = Type.Object(
  {
    op: Type.Literal('order.status'),
    id: MessageIdField,
    party: Party,
    clientOrderId: ClientOrderId('The clientOrderId the order was placed with'),
  },
  {
    additionalProperties: false,
    description:
      'The party\'s order by its clientOrderId (GET /v1/users/:party/orders/by-client-id/:clientOrderId); the connection must hold the party (proven by the URL or a subscribe). Answered by stream.answer {status: 200, body: {source, order}} or stream.error (403, 404).',
  },
);

interface StatusInput {
  readonly party: string;
  readonly clientOrderId: string;
}

export const orderStatus = declareCall<StatusInput>({
  op: 'order.status',
  rest: { method: 'GET', url: '/v1/users/:party/orders/by-client-id/:clientOrderId' },
  summary: 'An order of a party this connection holds, by its clientOrderId; answered by stream.answer {source, order, settlesBy?} (status pending while a place of it is on its way) or stream.error (403, 404).',
  message: OrderStatusOp,
  answer: ClientOrderAnswer,
  // Uncharged, a lookup the live path misses is a database read at the connection's message rate.
  budget: { weight: () => 1, party: 'held' },
  lane: 'lookups',
  heldParty: (s) => s.party,
  fromMessage: (m) => m as unknown as StatusInput,
  route: {
    scope: 'party',
    validation: 'fastify',
    schema: {
      tags: ['trading'],
      summary: 'An order by its clientOrderId',
      operationId: 'getOrderByClientId',
      description:
        'Signed (party route). The party\'s order placed with this clientOrderId: its status as the engine\'s events last told it; else, while a place of this id is on its way (its outcome unknown, e.g. after a 504), `source: "claim"` with `status: "pending"` and `settlesBy` (what a retried place is refused 409 with), or the order the engine answered for it; else the database mirror\'s; 404 when none knows it (never placed, or the claim settled as not placed: the id is free).',
      security: SIGNED,
      params: Type.Object({ party: PartyParams.properties.party, clientOrderId: ClientOrderId('The clientOrderId the order was placed with') }),
      response: { 200: ClientOrderAnswer, ...errors(400, 401, 403, 404, 429, 503) },
    },
    input: (request) => request.params as StatusInput,
  },
  handle: async (s, env) => ({ value: (await env.trading.clientOrder(s.party, s.clientOrderId)) as object }),
});
