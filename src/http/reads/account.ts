// The account of one party (docs/account.md): collateral, positions at the mark, margin, equity,
// free collateral and leverage. Served from the live runtime's account book (current with the
// engine's event stream; completed from the database the first time a party is asked for), or
// from the database alone on a gateway without the live stream.
// And its verifiable facts as of a past seq (`/account/as-of?seq=N`, ADR 0153): collateral and the
// open epochs as the mirror recorded them at seq <= N, so a verifier compares them with a
// commitment even while the party keeps trading.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { errors, MAX_SEQ, PartyParams } from '../schemas.js';
import { AccountBody } from '../../contracts/account-wire.js';
import { accountFromDatabase } from '../../stream/account-book.js';
import { loadAccountAsOf, type AccountAsOf as AsOfFacts, type NotYetIndexed } from '../../db/queries/account-as-of.js';
import { AccountAsOf } from './shapes.js';

/**
 * A seq written as a plain decimal integer: no sign, no leading zero, no exponent. Checked as a
 * string because the validator would coerce "007" or "1e3" to a number and answer as if asked for 7.
 */
const SEQ_TEXT = '^(0|[1-9][0-9]{0,15})$';

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

  app.get(
    '/v1/users/:party/account/as-of',
    {
      schema: {
        operationId: 'getUserAccountAsOf',
        tags: ['mirror'],
        summary: "The party's collateral and open positions as of a seq, as the mirror recorded them",
        description:
          'What the fill legs, deposits and approved withdrawals of the party at or before `seq` left: the collateral and each open epoch ' +
          '(size, entry price, realized PnL). No margin, mark or order. For a verifier comparing the account with a commitment ' +
          '(docs/verification.md "Your account"). 409 `not_yet_indexed` (with `head`) when `seq` is beyond the mirror.',
        params: PartyParams,
        querystring: Type.Object(
          {
            seq: Type.String({
              pattern: SEQ_TEXT,
              description: `The seq: a decimal integer from 0 to ${MAX_SEQ}, without sign, leading zero or exponent (anything else is a 400)`,
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: AccountAsOf, ...errors(400, 401, 403, 409, 503) },
      },
    },
    async (request) => {
      const { party } = request.params;
      const seq = Number(request.query.seq);
      if (!Number.isSafeInteger(seq)) throw new ApiError('bad_request', `querystring/seq must be at most ${MAX_SEQ}`);
      const facts = await app.db.readSnapshot<AsOfFacts | NotYetIndexed | null>(null, (tx) => loadAccountAsOf(tx, party, seq));
      if (facts === null) throw new ApiError('database_unavailable', 'no database is configured (DATABASE_URL): the account as of a seq is read from the mirror');
      if ('notYetIndexed' in facts) throw new ApiError('not_yet_indexed', `the mirror holds events up to seq ${facts.head}, not yet ${seq}`, { head: facts.head });
      return { party, ...facts };
    },
  );
};
