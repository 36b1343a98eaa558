// A fresh, migrated schema of the test PostgreSQL server for one test file.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { migrate } from '../../schema/migrate.js';
import { startEmbeddedPostgres } from '../../sandbox/pglite-server.js';

export interface TestDatabase {
  /** URL whose connections use this schema (search_path); give it to the gateway or indexer. */
  url: string;
  schema: string;
  /** An admin connection already on this schema, for seeding and assertions. */
  sql: postgres.Sql;
  kind: 'postgres' | 'pglite';
  drop(): Promise<void>;
}

export function serverUrl(): string {
  return inject('databaseUrl');
}

export async function createTestDatabase(options: { upTo?: string; migrate?: boolean } = {}): Promise<TestDatabase> {
  if (inject('databaseKind') === 'pglite') return createEmbeddedTestDatabase(options);
  const base = serverUrl();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = withSearchPath(base, schema);
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  if (options.migrate ?? true) await migrate(sql, options.upTo ? { upTo: options.upTo } : {});
  return {
    url,
    schema,
    sql,
    kind: inject('databaseKind'),
    async drop() {
      await sql.unsafe(`DROP SCHEMA ${schema} CASCADE`).catch(() => {});
      await sql.end({ timeout: 2 });
    },
  };
}

export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('search_path', schema);
  return u.toString();
}

async function createEmbeddedTestDatabase(options: { upTo?: string; migrate?: boolean }): Promise<TestDatabase> {
  const server = await startEmbeddedPostgres({ maxConnections: 64 });
  const sql = postgres(server.url, { max: 1, onnotice: () => {} });
  if (options.migrate ?? true) await migrate(sql, options.upTo ? { upTo: options.upTo } : {});
  return {
    url: server.url,
    schema: 'public',
    sql,
    kind: 'pglite',
    async drop() {
      await sql.end({ timeout: 2 });
      await server.stop();
    },
  };
}
