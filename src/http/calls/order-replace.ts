// Cancel an order and place its replacement: POST /v1/orders/replace and the socket's
// `order.replace`. The core is trading/replace.ts.
import { Type } from 'typebox';
import { assertOneParty } from '../../contracts/batch-party.js';
import { ReplaceAnswer, ReplaceBody, ReplaceFields } from '../../contracts/desk.js';
import { MessageIdField } from '../../stream/message-schemas.js';
import { errors } from '../schemas.js';
import { REPLACE_WEIGHT, runReplace } from '../trading/replace.js';
import { declareCall } from './declaration.js';
import { DESK_NOTE } from './order-batch.js';

export const ReplaceOp = Type.Object(
  { op: Type.Literal('order.replace'), id: MessageIdField, ...ReplaceFields },
  {
    additionalProperties: false,
    description:
      'A signed cancel and a signed place (POST /v1/orders/replace); the place is sent only once the engine confirmed the cancel, and a place the gateway refuses (a clientOrderId the party used or has in flight included) sends nothing. Answered by stream.answer with {cancel, place, replaced}.',
  },
);

export const orderReplace = declareCall<ReplaceBody>({
  op: 'order.replace',
  rest: { method: 'POST', url: '/v1/orders/replace' },
  summary: 'A signed cancel, then a signed place once the engine confirmed the cancel (POST /v1/orders/replace); answered by stream.answer {cancel, place, replaced}.',
  message: ReplaceOp,
  answer: ReplaceAnswer,
  budget: { weight: () => REPLACE_WEIGHT, party: 'signature' },
  lane: 'orders',
  fromMessage: (m) => m as unknown as ReplaceBody,
  beforeSchema: assertOneParty,
  route: {
    scope: 'trading',
    validation: 'strict',
    schema: {
      tags: ['trading'],
      summary: 'Cancel an order and place its replacement',
      operationId: 'replaceOrder',
      description: `${DESK_NOTE} The place is sent only once the engine confirmed the cancel (\`ok:true\`), so both orders are never live; when the cancel fails (the order already filled: \`order_not_open\`) the place is \`skipped\`. A place the gateway itself refuses (not JSON, \`invalid_body\`, \`duplicate_client_order_id\`: an id the party used or has in flight, on any replica) is refused before the cancel is sent: the cancel is \`skipped\` and the resting order stays. The place's \`clientOrderId\` is claimed before the cancel and freed when the cancel fails; the new order is then found by it like any order. Both outcomes are in the answer. Weight 1.`,
      security: [],
      body: ReplaceBody,
      response: { 200: ReplaceAnswer, ...errors(400, 413, 415, 429, 503) },
    },
    preValidation: async (request) => assertOneParty(request.body),
    input: (request) => request.body as ReplaceBody,
  },
  handle: async (request, env, ctx) => ({ value: await runReplace(env.trading.desk, ctx, request) }),
});
