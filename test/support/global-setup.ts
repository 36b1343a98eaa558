// Finds the PostgreSQL server the integration tests use: TEST_DATABASE_URL, else the local server
// on 127.0.0.1:5432, else an embedded PGlite served over its socket (so `npm test` passes on a
// laptop without PostgreSQL). With a server, each test database is a fresh schema of it; with
// PGlite (one backend whose session settings all connections share), each test database is its
// own embedded instance, started by test/support/db.ts inside the test worker.
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { checkRuntime } from '../../src/config/runtime.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseKind: 'postgres' | 'pglite';
  }
}

/** A query answers (not merely a port listening: a starting server refuses queries). */
export async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

export async function setup(project: TestProject): Promise<void> {
  // The suite runs on the Node release the project supports, never silently on the machine's own.
  const runtime = checkRuntime();
  if (!runtime.ok) throw new Error(runtime.message);
  console.log(`[tests] running on ${runtime.message}`);
  const candidate = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (process.env.TEST_FORCE_PGLITE !== 'true' && (await reachable(candidate))) {
    project.provide('databaseUrl', candidate);
    project.provide('databaseKind', 'postgres');
    return;
  }
  console.warn(`[tests] no PostgreSQL reachable at ${candidate}; each test database is an embedded PGlite`);
  project.provide('databaseUrl', '');
  project.provide('databaseKind', 'pglite');
}
