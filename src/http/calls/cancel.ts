// Cancel an order: DELETE /v1/orders/:orderId and the socket's `order.cancel`.
import { Type } from 'typebox';
import { MalformedMessageError } from '../../stream/client-messages.js';
import { MessageIdField, ProofSession, ProofSig, ProofUser } from '../../stream/message-schemas.js';
import { errors } from '../schemas.js';
import { CancelAnswer, CancelParams, SIGNED } from '../trading/schemas.js';
import { orderIdPath } from '../trading/targets.js';
import { declareCall } from './declaration.js';
import { canonicalTarget, SIGNED_NOTE } from './rest.js';
import { fromRequest, signatureOfMessage, type SignedBodyInput } from './signed.js';

export const CancelOrderOp = Type.Object(
  {
    op: Type.Literal('order.cancel'),
    id: MessageIdField,
    orderId: Type.String({ minLength: 1, maxLength: 64, description: 'The order to cancel' }),
    user: ProofUser,
    sessionId: ProofSession,
    sig: ProofSig('"DELETE\\n/v1/orders/<encodeURIComponent(orderId)>\\n<tsMs>\\n"'),
  },
  { additionalProperties: false, description: 'A signed DELETE /v1/orders/:orderId; answered by stream.answer or stream.error.' },
);

/** No body on the socket; REST forwards one sent with the DELETE as it forwards any signed body (the signature covers it). */
interface CancelInput extends SignedBodyInput {
  readonly orderId: string;
}

const NO_BODY = () => undefined;

export const cancelOrder = declareCall<CancelInput>({
  op: 'order.cancel',
  rest: { method: 'DELETE', url: '/v1/orders/:orderId' },
  summary: 'A signed DELETE /v1/orders/:orderId; answered by stream.answer or stream.error.',
  message: CancelOrderOp,
  answer: CancelAnswer,
  budget: { weight: () => 1, party: 'signature' },
  lane: 'orders',
  fromMessage: (m) => {
    const orderId = m.orderId;
    if (typeof orderId !== 'string' || orderId.length < 1 || orderId.length > 64) throw new MalformedMessageError('"orderId" must be a string of 1..64 characters');
    return { orderId, signature: signatureOfMessage(m), body: NO_BODY };
  },
  route: {
    scope: 'trading',
    validation: 'fastify',
    schema: {
      tags: ['trading'],
      summary: 'Cancel an order',
      operationId: 'cancelOrder',
      description: `${SIGNED_NOTE} No body.`,
      security: SIGNED,
      params: CancelParams,
      response: { 200: CancelAnswer, ...errors(400, 401, 404, 413, 415, 429, 502, 503, 504) },
    },
    input: (request) => {
      const { orderId } = request.params as { orderId: string };
      canonicalTarget(request, orderIdPath(orderId));
      return { orderId, ...fromRequest(request) };
    },
  },
  engine: { route: 'DELETE /v1/orders/:orderId' },
  handle: async (input, env, ctx) => {
    const signature = input.signature();
    const relayed = await env.send({ method: 'DELETE', target: orderIdPath(input.orderId), body: input.body(), signature, requestId: ctx.requestId, address: ctx.ip });
    return { relayed };
  },
});
