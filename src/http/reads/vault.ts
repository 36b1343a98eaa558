// Vaults (on-chain projection): /v1/vault, /v1/vaults, /v1/vaults/:operator.
import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../errors.js';
import { errors, List } from '../schemas.js';
import { firstTwoVaults, listVaults, vaultByOperator, type VaultRow } from '../../db/queries/vaults.js';
import { Vault } from './shapes.js';

/** Operators are on-chain ids: printable ASCII, no spaces. */
const OperatorParams = Type.Object({
  operator: Type.String({ pattern: '^[\\x21-\\x7E]{1,256}$', description: 'Vault operator id' }),
});

export const vaultRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app;

  app.get(
    '/v1/vault',
    {
      schema: {
        operationId: 'getCurrentVault',
        security: [],
        tags: ['vault'],
        summary: 'Current vault (single operator)',
        description:
          'The vault of `VAULT_OPERATOR` when it is set, else the only vault. 404 when there is none, and also when several ' +
          'vaults exist and `VAULT_OPERATOR` is not set (the gateway will not guess; use `/v1/vaults/{operator}`).',
        response: { 200: Vault, ...errors(404, 503) },
      },
    },
    async () => {
      const operator = config.vaultOperator;
      if (operator !== null) {
        const vault = await db.read<VaultRow | null>(null, (sql) => vaultByOperator(sql, operator));
        if (!vault) throw new ApiError('not_found', `no vault for VAULT_OPERATOR ${operator}`);
        return vault;
      }
      const vaults = await db.read<VaultRow[]>([], (sql) => firstTwoVaults(sql));
      if (vaults.length === 0) throw new ApiError('not_found', 'no vault');
      if (vaults.length > 1) {
        throw new ApiError('not_found', 'several vaults exist and VAULT_OPERATOR is not set; use /v1/vaults/{operator}');
      }
      return vaults[0]!;
    },
  );

  app.get(
    '/v1/vaults',
    {
      schema: {
        operationId: 'listVaults',
        security: [],
        tags: ['vault'],
        summary: 'All vaults',
        description: 'Every vault by operator; one page (`nextCursor` is always null).',
        response: { 200: List(Vault), ...errors(503) },
      },
    },
    async () => ({ items: await db.read<VaultRow[]>([], (sql) => listVaults(sql)), nextCursor: null }),
  );

  app.get(
    '/v1/vaults/:operator',
    {
      schema: {
        operationId: 'getVault',
        security: [],
        tags: ['vault'],
        summary: "One operator's vault",
        params: OperatorParams,
        response: { 200: Vault, ...errors(400, 404, 503) },
      },
    },
    async (request) => {
      const { operator } = request.params;
      const vault = await db.read<VaultRow | null>(null, (sql) => vaultByOperator(sql, operator));
      if (!vault) throw new ApiError('not_found', `no vault for operator ${operator}`);
      return vault;
    },
  );
};
