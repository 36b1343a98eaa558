// Balance of one party: `new_balance` of its last fill leg (docs/rest.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams } from '../schemas.js';
import { balanceOf, type Balance } from '../../db/queries/fills.js';
import { BalanceBody } from './shapes.js';

const NO_FILL: Balance = { balance: '0.0000000000', asOfSeq: null };

export const balanceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/users/:party/balance',
    {
      schema: {
        operationId: 'getUserBalance',
        tags: ['mirror'],
        summary: "The party's balance: newBalance of its last fill leg",
        description: 'A party without a fill has balance "0.0000000000" and asOfSeq null.',
        params: PartyParams,
        response: { 200: BalanceBody, ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { party } = request.params;
      const b = await app.db.read(NO_FILL, (sql) => balanceOf(sql, party));
      return { party, ...b };
    },
  );
};
