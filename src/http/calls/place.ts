// Place an order: POST /v1/orders and the socket's `order.place`.
import { Type } from 'typebox';
import { MalformedMessageError } from '../../stream/client-messages.js';
import { MessageIdField, ProofSession, ProofSig, ProofUser } from '../../stream/message-schemas.js';
import { OrderAnswer, OrderBody, SIGNED } from '../trading/schemas.js';
import { declareCall } from './declaration.js';
import { canonicalTarget, PROXY_ERRORS, SIGNED_NOTE } from './rest.js';
import { fromRequest, messageBody, signatureOfMessage, type SignedBodyInput } from './signed.js';

/** A place whose client order id the party already used (client-order-ids.ts): the shared 409 text is the mirror's. */
const DUPLICATE_ORDER = {
  409: {
    ...Type.Ref('Error'),
    description:
      'Duplicate (code `duplicate_client_order_id`, with `order`: the first order of this party with this clientOrderId, `{clientOrderId, orderId, status, …}`; `{clientOrderId, status: "pending", orderId: null}` with `settlesBy` while it is on its way, as the status route answers it): nothing was sent to the engine (docs/trading.md "Client order ids")',
  },
};

export const PlaceOrderOp = Type.Object(
  {
    op: Type.Literal('order.place'),
    id: MessageIdField,
    body: Type.String({
      description:
        'The order JSON exactly as signed (what POST /v1/orders would carry as its body); one that is not the engine order request\'s shape is refused `invalid_body` (400) as REST refuses it (docs/trading.md)',
    }),
    user: ProofUser,
    sessionId: ProofSession,
    sig: ProofSig('"POST\\n/v1/orders\\n<tsMs>\\n<body>"'),
  },
  { additionalProperties: false, description: 'A signed POST /v1/orders; answered by stream.answer (the engine\'s answer) or stream.error (the REST code).' },
);

export const placeOrder = declareCall<SignedBodyInput>({
  op: 'order.place',
  rest: { method: 'POST', url: '/v1/orders' },
  summary: 'A signed POST /v1/orders; answered by stream.answer or stream.error.',
  message: PlaceOrderOp,
  answer: OrderAnswer,
  budget: { weight: () => 1, party: 'signature' },
  lane: 'orders',
  fromMessage: (m) => {
    if (typeof m.body !== 'string') throw new MalformedMessageError('"body" must be the signed request body as a string (the JSON text sent over REST)');
    return { body: messageBody(m.body), signature: signatureOfMessage(m) };
  },
  route: {
    scope: 'trading',
    validation: 'handler',
    schema: {
      tags: ['trading'],
      summary: 'Place an order',
      operationId: 'placeOrder',
      description: `${SIGNED_NOTE} Accepted and rejected orders are both HTTP 200: check \`ok\`.`,
      security: SIGNED,
      body: OrderBody,
      response: { 200: OrderAnswer, ...PROXY_ERRORS, ...DUPLICATE_ORDER },
    },
    input: (request) => {
      canonicalTarget(request, '/v1/orders');
      return fromRequest(request);
    },
  },
  engine: { route: 'POST /v1/orders', body: OrderBody, admit: 'client-order-id', explain: 'ended-at-once' },
  handle: async (input, env, ctx) => {
    // In the order REST judges them: the body is parsed before the headers are read.
    const body = input.body();
    const relayed = await env.send({ method: 'POST', target: '/v1/orders', body, signature: input.signature(), requestId: ctx.requestId, address: ctx.ip });
    return { relayed };
  },
});
