// The claim-status index re-checks its pending claims against the chain tables alone
// (claimsOnChain): the keys travel as array literals, so a party with the characters those quote
// (`"`, `\`, `,`, braces, spaces) must reach PostgreSQL unchanged, and each claim comes back with
// the status its claimed root gives against the chain's.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { Database } from '../../../src/db/database.js';
import { claimsOnChain } from '../../../src/db/queries/verifications.js';

let db: TestDatabase;
let gatewayDb: Database;
const ODD = 'odd "party" \\ with, {braces} and spaces';
const root = (c: string) => c.repeat(64);

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO user_batches (party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at) VALUES
    (${ODD}, 1, NULL, ${root('a')}, ${root('0')}, 1, NULL, now()),
    (${ODD}, 2, NULL, ${root('b')}, ${root('a')}, 1, NULL, now()),
    ('plain', 7, NULL, ${root('c')}, ${root('0')}, 1, NULL, now())`;
  await db.sql`INSERT INTO batches (batch_num, root, prev_root, user_batch_count, first_seq, last_seq, tx_id, committed_at) VALUES
    (4, ${root('d')}, ${root('0')}, 1, 1, 2, NULL, now())`;
  // The gateway's own connection settings (bigint as numbers, camelCase columns).
  gatewayDb = new Database({ databaseUrl: db.url, dbPoolMax: 2, dbConnectTimeoutS: 5, dbStatementTimeoutMs: 10_000 }, pino({ level: 'silent' }));
});
afterAll(async () => {
  await gatewayDb?.close();
  await db?.drop();
});

describe('claimsOnChain', () => {
  it('returns the claims the chain recorded, matched or not; the others stay pending', async () => {
    const sql = gatewayDb.sql!;
    const found = await claimsOnChain(sql, 'user-batches', [
      { seq: 10, party: ODD, key: 1, root: root('a') },
      { seq: 11, party: ODD, key: 2, root: root('e') },
      { seq: 12, party: ODD, key: 3, root: root('f') },
      { seq: 13, party: 'plain', key: 7, root: root('c') },
      { seq: 14, party: null, key: 7, root: root('c') },
    ]);
    expect(found.sort((a, b) => a.seq - b.seq)).toEqual([
      { seq: 10, party: ODD, status: 'match' },
      { seq: 11, party: ODD, status: 'mismatch' },
      { seq: 13, party: 'plain', status: 'match' },
    ]);
    const manifests = await claimsOnChain(sql, 'manifests', [
      { seq: 20, party: null, key: 4, root: root('d') },
      { seq: 21, party: null, key: 5, root: root('d') },
    ]);
    expect(manifests).toEqual([{ seq: 20, party: null, status: 'match' }]);
    expect(await claimsOnChain(sql, 'user-batches', [])).toEqual([]);
  });
});
