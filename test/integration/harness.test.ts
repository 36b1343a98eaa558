import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { listMigrations } from '../../schema/migrate.js';

describe('test database harness', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('applies every migration in order into its own schema', async () => {
    const rows = await db.sql<{ version: string }[]>`SELECT version FROM schema_migrations ORDER BY version`;
    expect(rows.map((r) => r.version)).toEqual(listMigrations().map((m) => m.version));
    expect(rows.at(-1)?.version).toBe('0015_fired_limit');
    const [row] = await db.sql<{ schema: string }[]>`SELECT current_schema() AS schema`;
    expect(row?.schema).toBe(db.schema);
  });

  it('can build a database stopped at 0013', async () => {
    const old = await createTestDatabase({ upTo: '0013_events' });
    try {
      const cols = await old.sql<{ columnName: string }[]>`
        SELECT column_name AS "columnName" FROM information_schema.columns
        WHERE table_schema = ${old.schema} AND table_name = 'triggers'`;
      const names = cols.map((c) => c.columnName);
      expect(names).toContain('trigger_price');
      expect(names).not.toContain('fired_limit');
      expect(names).not.toContain('size');
    } finally {
      await old.drop();
    }
  });
});
