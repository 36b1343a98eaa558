// The overall deadline of Database reads: it fires, it maps to 503 database_unavailable, and it never
// leaves a timer behind (whether the work resolves, rejects, or loses the race).
import { describe, expect, it } from 'vitest';
import { Database, DeadlineError, DEADLINE_MARGIN_MS } from '../../../src/db/database.js';
import { DatabaseUnavailableError } from '../../../src/db/errors.js';
import { fromDomainError } from '../../../src/http/errors.js';

const log = { warn: () => {}, error: () => {} };
const config = { databaseUrl: undefined, dbPoolMax: 1, dbConnectTimeoutS: 1, dbStatementTimeoutMs: 200 };
const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('Database deadline', () => {
  it('is connect timeout + statement timeout + margin', () => {
    expect(new Database(config as never, log).deadlineMs).toBe(1_000 + 3 * 200 + DEADLINE_MARGIN_MS);
  });

  it('rejects with DeadlineError past the deadline, translated to DatabaseUnavailableError (503 database_unavailable at the edge)', async () => {
    const db = new Database(config as never, log);
    const started = performance.now();
    const err = await db.withDeadline(() => new Promise(() => {}), 50).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(performance.now() - started).toBeLessThan(1_000);
    const domain = db.translate(err);
    expect(domain).toBeInstanceOf(DatabaseUnavailableError);
    expect(fromDomainError(domain)?.body()).toEqual({ error: 'the indexer database is unavailable; retry shortly', code: 'database_unavailable' });
  });

  it('leaves no timer behind', async () => {
    const db = new Database(config as never, log);
    const before = timeouts();
    for (let i = 0; i < 50; i++) {
      await db.withDeadline(async () => i);
      await db.withDeadline(async () => Promise.reject(new Error('boom'))).catch(() => {});
      await db.withDeadline(() => new Promise(() => {}), 1).catch(() => {});
    }
    expect(await db.withDeadline(async () => 'ok')).toBe('ok');
    expect(timeouts()).toBeLessThanOrEqual(before);
  });
});
