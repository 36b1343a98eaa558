// The account of one party (docs/account.md): collateral, positions at the mark, margin, equity,
// free collateral and leverage. Served from the live runtime's account book (current with the
// engine's event stream; completed from the database the first time a party is asked for), or
// from the database alone on a gateway without the live stream.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams } from '../schemas.js';
import { AccountBody } from '../../contracts/account-wire.js';
import { accountFromDatabase } from '../../stream/account-book.js';

export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/users/:party/account',
    {
      schema: {
        operationId: 'getUserAccount',
        tags: ['mirror'],
        summary: "The party's account: collateral, positions at the mark, margin, equity, free collateral, leverage",
        description:
          'Collateral counts every deposit, approved withdrawal and fill as the engine does (unlike /balance, the last fill only). ' +
          'freeCollateral is what the engine checks an opening order against: its initial margin (notional / maxLeverage) must fit, ' +
          'else insufficient_margin. The mark price is the price of the market\'s latest match (docs/account.md).',
        params: PartyParams,
        response: { 200: AccountBody, ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { party } = request.params;
      const live = app.live;
      if (live?.accounts && live.status().enabled) return live.accounts.account(party);
      return accountFromDatabase(app.db, party);
    },
  );
};
