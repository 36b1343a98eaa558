// Applies the indexer schema's ordered SQL migrations (schema/migrations/NNNN_name.sql).
// The gateway never runs this: the reference indexer, the local stack and the tests do.
// `upTo` stops after the named migration, so a database "at 0013" can be built for tests.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(join(dir, f), 'utf8') }));
}

export async function migrate(sql: Sql, options: { upTo?: string } = {}): Promise<string[]> {
  const all = listMigrations();
  if (options.upTo && !all.some((m) => m.version === options.upTo)) {
    throw new Error(`unknown migration ${options.upTo}`);
  }
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;
  const done = new Set((await sql<{ version: string }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
  const applied: string[] = [];
  for (const m of all) {
    if (!done.has(m.version)) {
      await sql.begin(async (tx) => {
        await tx.unsafe(m.sql);
        await tx`INSERT INTO schema_migrations (version, applied_at) VALUES (${m.version}, now())`;
      });
      applied.push(m.version);
    }
    if (m.version === options.upTo) break;
  }
  return applied;
}
