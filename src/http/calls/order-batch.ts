// Up to 50 signed places and cancels in one call: POST /v1/orders/batch and the socket's
// `order.batch`. The batch's core is trading/batch.ts; its weight is declared here and charged by
// the pipeline before any item is verified or sent.
import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { assertOneParty } from '../../contracts/batch-party.js';
import { BatchAnswer, BatchBody, BatchFields, MAX_BATCH_ITEMS } from '../../contracts/desk.js';
import { MessageIdField } from '../../stream/message-schemas.js';
import { ApiError } from '../errors.js';
import { errors } from '../schemas.js';
import { batchWeight, runBatch, type BatchRequest } from '../trading/batch.js';
import { declareCall, type CallResult } from './declaration.js';

/** What the REST description says of every desk call's signatures. */
export const DESK_NOTE =
  'Not signed as a whole: each item carries its own `sig`, made exactly as for the call alone (with the batch\'s `user` and `sessionId`), so the engine verifies the same bytes.';

export const BatchOp = Type.Object(
  { op: Type.Literal('order.batch'), id: MessageIdField, ...BatchFields },
  {
    additionalProperties: false,
    description: `Up to ${MAX_BATCH_ITEMS} signed place / cancel calls (POST /v1/orders/batch); answered by stream.answer with {results, weight} (every item's outcome, in order) or stream.error when the batch itself is refused.`,
  },
);

/** Serialised here: the schema's serializer picks each outcome's branch by validating it, 50 times. */
export function sendJson(reply: FastifyReply, result: CallResult): FastifyReply {
  const value = 'value' in result ? result.value : null;
  return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => JSON.stringify(payload)).send(value);
}

export const orderBatch = declareCall<BatchRequest>({
  op: 'order.batch',
  rest: { method: 'POST', url: '/v1/orders/batch' },
  summary: 'Up to 50 signed place / cancel calls, each signed as alone (POST /v1/orders/batch); answered by stream.answer {results, weight} or stream.error.',
  message: BatchOp,
  answer: BatchAnswer,
  // One request per started ten items, in both budgets (the party's charged once the items' signatures prove it: batch.ts).
  // Its items are as many engine calls: past the address's room it is refused whole (ADR 0365).
  budget: { weight: (b) => batchWeight(b.items.length), party: 'signature', engineCalls: (b) => (Array.isArray(b?.items) ? b.items.length : 0) },
  lane: 'orders',
  fromMessage: (m) => m as unknown as BatchRequest,
  // As REST: an item naming a signer of its own is refused by name before the schema's check.
  beforeSchema: assertOneParty,
  shape: (b) => {
    if (b.stopOnFailure && b.mode !== 'ordered') throw new ApiError('bad_request', 'stopOnFailure needs mode "ordered" (concurrent items are all sent at once)');
  },
  route: {
    scope: 'trading',
    validation: 'strict',
    schema: {
      tags: ['trading'],
      summary: `Place and cancel up to ${MAX_BATCH_ITEMS} orders in one call`,
      operationId: 'batchOrders',
      description: `${DESK_NOTE} Items go to the engine concurrently (\`mode: "concurrent"\`, default) or one after the other (\`"ordered"\`, with \`stopOnFailure\` to stop at the first failure). The answer lists every item's outcome in order; HTTP 200 whatever the items' fates. Weight: one request per started ten items (docs/trading.md "Batch weights").`,
      security: [],
      body: BatchBody,
      response: { 200: BatchAnswer, ...errors(400, 413, 415, 429, 503) },
    },
    // Before the schema, which would call an item's `user` only an unknown field.
    preValidation: async (request) => assertOneParty(request.body),
    input: (request) => request.body as BatchRequest,
    send: sendJson,
  },
  handle: async (request, env, ctx) => ({ value: await runBatch(env.trading.desk, ctx, request) }),
});
