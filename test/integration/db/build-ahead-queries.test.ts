// The reads of the proof warmer (ADR 0382) on real PostgreSQL: where building ahead starts, the
// manifests after a point, and each party's span of user batches in a range of manifests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAheadStart, manifestsParties, newManifests } from '../../../src/db/queries/commitments.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';

describe('the proof warmer reads', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('an empty chain: nothing to start from, nothing new', async () => {
    expect(await buildAheadStart(db.sql, 1_000, 100)).toBe(0);
    expect(await newManifests(db.sql, 0, 10)).toEqual([]);
  });

  it('starts after the newest manifests whose user batches hold the budget, and lists each party\'s span', async () => {
    const root = 'a'.repeat(64);
    // Manifests 1..5; ann has a batch of 100 events in each, ben of 50 in 2 and 4 (user seqs 1, 2).
    for (let n = 1; n <= 5; n++) {
      await db.sql`INSERT INTO batches (batch_num, root, prev_root, user_batch_count, first_seq, last_seq, tx_id, committed_at) VALUES (${n}, ${root}, ${root}, 1, ${n * 10}, ${n * 10 + 9}, null, now())`;
      await db.sql`INSERT INTO user_batches (party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at) VALUES ('ann', ${n}, ${n}, ${root}, ${root}, 100, null, now())`;
    }
    for (const [seq, n] of [[1, 2], [2, 4]] as const) {
      await db.sql`INSERT INTO user_batches (party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at) VALUES ('ben', ${seq}, ${n}, ${root}, ${root}, 50, null, now())`;
    }
    // From the newest: 5 holds 100, 4 250, 3 350, 2 500, 1 600.
    expect(await buildAheadStart(db.sql, 350, 100)).toBe(2);
    expect(await buildAheadStart(db.sql, 349, 100)).toBe(3);
    expect(await buildAheadStart(db.sql, 10_000, 100)).toBe(0);
    // Not even the newest fits: start after it (only what the chain records next).
    expect(await buildAheadStart(db.sql, 99, 100)).toBe(5);
    // The scan bound: only the newest two are looked at.
    expect(await buildAheadStart(db.sql, 10_000, 2)).toBe(3);

    expect(await newManifests(db.sql, 2, 2)).toEqual([3, 4]);
    expect(await newManifests(db.sql, 5, 10)).toEqual([]);
    expect(await manifestsParties(db.sql, [2, 3, 4])).toEqual([
      { party: 'ann', fromUserSeq: 2, count: 3 },
      { party: 'ben', fromUserSeq: 1, count: 2 },
    ]);
  });
});
