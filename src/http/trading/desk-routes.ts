// The desk's REST routes (docs/trading.md "Batches", "Cancel-replace"): several signed calls in
// one request. Registered by the trading proxy routes (routes.ts), which own the item calls; the
// socket's `order.batch` / `order.replace` run the same cores (batch.ts, replace.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors } from '../schemas.js';
import type { FastifyReply } from 'fastify';
import { runBatch, type DeskContext, type DeskParts } from './batch.js';
import { BatchAnswer, BatchBody, MAX_BATCH_ITEMS, ReplaceAnswer, ReplaceBody } from '../../contracts/desk.js';
import { runReplace } from './replace.js';
import { assertOneParty } from '../../contracts/batch-party.js';
import { strictBodyCompiler } from './strict-body.js';

const NOTE =
  'Not signed as a whole: each item carries its own `sig`, made exactly as for the call alone (with the batch\'s `user` and `sessionId`), so the engine verifies the same bytes.';

/** The limiter's onRequest hook wrote the headers after the first unit; a heavier call rewrites what is left. */
function weightedHeaders(reply: FastifyReply, ctx: DeskContext): void {
  if (!ctx.addressLeft) return;
  void reply.header('ratelimit-remaining', ctx.addressLeft.remaining).header('ratelimit-reset', ctx.addressLeft.resetS);
}

export const deskRoutes: FastifyPluginAsyncTypebox<{ parts: DeskParts }> = async (app, { parts }) => {
  app.post('/v1/orders/batch', {
    schema: {
      tags: ['trading'],
      summary: `Place and cancel up to ${MAX_BATCH_ITEMS} orders in one call`,
      operationId: 'batchOrders',
      description: `${NOTE} Items go to the engine concurrently (\`mode: "concurrent"\`, default) or one after the other (\`"ordered"\`, with \`stopOnFailure\` to stop at the first failure). The answer lists every item's outcome in order; HTTP 200 whatever the items' fates. Weight: one request per started ten items (docs/trading.md "Batch weights").`,
      security: [],
      body: BatchBody,
      response: { 200: BatchAnswer, ...errors(400, 413, 415, 429, 503) },
    },
    // Before the schema, which would call an item's `user` only an unknown field.
    preValidation: async (request) => assertOneParty(request.body),
    validatorCompiler: strictBodyCompiler,
    handler: async (request, reply) => {
      const ctx: DeskContext = { ip: request.ip, requestId: request.id, addressCharged: 1 };
      const result = await runBatch(parts, ctx, request.body);
      weightedHeaders(reply, ctx);
      // Serialised here: the schema's serializer picks each outcome's branch by validating it, 50 times.
      return reply.type('application/json; charset=utf-8').serializer((payload: unknown) => JSON.stringify(payload)).send(result);
    },
  });

  app.post('/v1/orders/replace', {
    schema: {
      tags: ['trading'],
      summary: 'Cancel an order and place its replacement',
      operationId: 'replaceOrder',
      description: `${NOTE} The place is sent only once the engine confirmed the cancel (\`ok:true\`), so both orders are never live; when the cancel fails (the order already filled: \`order_not_open\`) the place is \`skipped\`. A place the gateway itself refuses (not JSON, \`invalid_body\`, \`duplicate_client_order_id\`: an id the party used or has in flight, on any replica) is refused before the cancel is sent: the cancel is \`skipped\` and the resting order stays. The place's \`clientOrderId\` is claimed before the cancel and freed when the cancel fails; the new order is then found by it like any order. Both outcomes are in the answer. Weight 1.`,
      security: [],
      body: ReplaceBody,
      response: { 200: ReplaceAnswer, ...errors(400, 413, 415, 429, 503) },
    },
    preValidation: async (request) => assertOneParty(request.body),
    validatorCompiler: strictBodyCompiler,
    handler: async (request) => runReplace(parts, { ip: request.ip, requestId: request.id, addressCharged: 1 }, request.body),
  });
};
