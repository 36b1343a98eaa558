// Deposits, withdrawals and the withdrawal counter (on-chain projection).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams, READ_ERRORS } from '../schemas.js';
import { EMPTY_PAGE } from '../../db/queries/page.js';
import { listDeposits, listWithdrawals, withdrawalNonce } from '../../db/queries/collateral.js';
import { Before, Deposit, OptLimit, DEFAULT_LIMIT, NewestFirst, Party, StringEnum, Withdrawal, WithdrawalCounter } from './shapes.js';

const WithdrawalStatus = StringEnum(['requested', 'approved', 'rejected'] as const, 'Only withdrawals in this status');

export const collateralRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.get(
    '/v1/deposits',
    {
      schema: {
        operationId: 'listDeposits',
        security: [],
        tags: ['collateral'],
        summary: 'Deposit receipts, newest first',
        querystring: Type.Object({ user: Type.Optional(Party), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(Deposit), ...errors(...READ_ERRORS) },
      },
    },
    async (request) => {
      const { user, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listDeposits(sql, { party: user, before, limit }));
    },
  );

  app.get(
    '/v1/withdrawals',
    {
      schema: {
        operationId: 'listWithdrawals',
        security: [],
        tags: ['collateral'],
        summary: 'Withdrawal requests, newest first',
        querystring: Type.Object({
          user: Type.Optional(Party),
          status: Type.Optional(WithdrawalStatus),
          before: Type.Optional(Before),
          limit: OptLimit,
        }),
        response: { 200: NewestFirst(Withdrawal), ...errors(...READ_ERRORS) },
      },
    },
    async (request) => {
      const { user, status, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listWithdrawals(sql, { party: user, status, before, limit }));
    },
  );
};

/** The party routes of this family: registered in the party scope (http/party-scope.ts), which guards them. */
export const userCollateralRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.get(
    '/v1/users/:party/deposits',
    {
      schema: {
        operationId: 'listUserDeposits',
        tags: ['collateral'],
        summary: "One party's deposits, newest first",
        params: PartyParams,
        querystring: Type.Object({ before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(Deposit), ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listDeposits(sql, { party: request.params.party, before, limit }));
    },
  );

  app.get(
    '/v1/users/:party/withdrawals',
    {
      schema: {
        operationId: 'listUserWithdrawals',
        tags: ['collateral'],
        summary: "One party's withdrawal requests, newest first",
        params: PartyParams,
        querystring: Type.Object({ status: Type.Optional(WithdrawalStatus), before: Type.Optional(Before), limit: OptLimit }),
        response: { 200: NewestFirst(Withdrawal), ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { status, before, limit = DEFAULT_LIMIT } = request.query;
      return db.read(EMPTY_PAGE, (sql) => listWithdrawals(sql, { party: request.params.party, status, before, limit }));
    },
  );

  app.get(
    '/v1/users/:party/withdrawal-counter',
    {
      schema: {
        operationId: 'getUserWithdrawalCounter',
        tags: ['collateral'],
        summary: "The party's current withdrawal nonce (0 when it never withdrew)",
        params: PartyParams,
        response: { 200: WithdrawalCounter, ...errors(400, 401, 403, 503) },
      },
    },
    async (request) => {
      const { party } = request.params;
      return { party, nonce: await db.read(0, (sql) => withdrawalNonce(sql, party)) };
    },
  );
};
