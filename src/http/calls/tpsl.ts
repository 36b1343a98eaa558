// Set or cancel take-profit / stop-loss: POST /v1/tpsl (REST only).
import { SIGNED, TpslAnswer, TpslBody } from '../trading/schemas.js';
import { declareCall } from './declaration.js';
import { canonicalTarget, PROXY_ERRORS, SIGNED_NOTE } from './rest.js';
import { fromRequest, type SignedBodyInput } from './signed.js';

export const setTpsl = declareCall<SignedBodyInput>({
  op: null,
  rest: { method: 'POST', url: '/v1/tpsl' },
  summary: 'Set or cancel take-profit / stop-loss on a position',
  message: null,
  answer: TpslAnswer,
  budget: { weight: () => 1, party: 'signature' },
  lane: 'orders',
  route: {
    scope: 'trading',
    validation: 'handler',
    schema: {
      tags: ['trading'],
      summary: 'Set or cancel take-profit / stop-loss on a position',
      operationId: 'setTpsl',
      description: `${SIGNED_NOTE} A leg set to null cancels that leg.`,
      security: SIGNED,
      body: TpslBody,
      response: { 200: TpslAnswer, ...PROXY_ERRORS },
    },
    input: (request) => {
      canonicalTarget(request, '/v1/tpsl');
      return fromRequest(request);
    },
  },
  engine: { route: 'POST /v1/tpsl', body: TpslBody },
  handle: async (input, env, ctx) => {
    const body = input.body();
    const relayed = await env.send({ method: 'POST', target: '/v1/tpsl', body, signature: input.signature(), requestId: ctx.requestId, address: ctx.ip });
    return { relayed };
  },
});
