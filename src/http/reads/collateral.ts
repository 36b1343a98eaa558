// Deposits, withdrawals and the withdrawal counter (on-chain projection).
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, PartyParams, READ_ERRORS } from '../schemas.js';
import { EMPTY_JSON_PAGE } from '../../db/json/json-body.js';
import { sendJson } from './json-reply.js';
import { sharedPages } from './shared-pages.js';
import { listDepositsJson, listWithdrawalsJson, withdrawalNonce } from '../../db/queries/collateral.js';
import { Before, Deposit, OptLimit, DEFAULT_LIMIT, NewestFirst, Party, StringEnum, Withdrawal, WithdrawalCounter } from './shapes.js';

const WithdrawalStatus = StringEnum(['requested', 'approved', 'rejected'] as const, 'Only withdrawals in this status');

export const collateralRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listDeposits: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listDepositsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listDepositsJson(sql, f, db.rows))),
    listWithdrawals: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listWithdrawalsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listWithdrawalsJson(sql, f))),
  };

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
    async (request, reply) => {
      const { user, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listDeposits({ party: user, before, limit }));
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
    async (request, reply) => {
      const { user, status, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listWithdrawals({ party: user, status, before, limit }));
    },
  );
};

/** The party routes of this family: registered in the party scope (http/party-scope.ts), which guards them. */
export const userCollateralRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;
  // Identical concurrent reads share one database read and body (shared-pages.ts).
  const pages = {
    listDeposits: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listDepositsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listDepositsJson(sql, f, db.rows))),
    listWithdrawals: sharedPages(app.config.listSharedReads, (f: Parameters<typeof listWithdrawalsJson>[1]) =>
      db.read(EMPTY_JSON_PAGE, (sql) => listWithdrawalsJson(sql, f))),
  };

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
    async (request, reply) => {
      const { before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listDeposits({ party: request.params.party, before, limit }));
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
    async (request, reply) => {
      const { status, before, limit = DEFAULT_LIMIT } = request.query;
      return sendJson(reply, await pages.listWithdrawals({ party: request.params.party, status, before, limit }));
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
