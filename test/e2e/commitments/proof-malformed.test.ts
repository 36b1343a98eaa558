// The proof route meets inputs and chain records the contract does not allow, over real HTTP on a
// history traded on the reference engine and recorded by the reference indexer: a zero-padded
// batch number is refused like any other non-canonical number (400 with a code), and a chain record
// that is not well formed (a root that is not 64 hex characters, a negative event count) is
// reported as a `mismatch` with reason `record`, never a 5xx.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testGateway, testRecordedChain } from '../../support/stacks.js';
import type { RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import type { TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { fundedClient } from '../../sandbox/engine/helpers.js';

describe('proof route: values the contract does not allow', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let indexer: RunningIndexer;
  let gateway: TestGateway;
  let party = '';

  const stacks = fileScope();
  beforeAll(async () => {
    ({ engine, db, indexer } = await testRecordedChain(stacks));
    const [ann, ben] = await Promise.all(['ann', 'ben'].map((h) => fundedClient(engine.url, engine.adminToken, '100000', h)));
    party = ann!.id;
    engine.engine.commit(); // manifest 1: the faucet credits
    await ben!.placeOrder({ market: 'BTC-PERP', type: 'limit', side: 'sell', price: '60000', size: '0.5' });
    await ann!.placeOrder({ market: 'BTC-PERP', type: 'limit', side: 'buy', price: '60000', size: '0.5' });
    engine.engine.commit(); // manifest 2
    await indexer.waitFor(engine.engine.log.maxSeq);
    gateway = await testGateway(stacks, { DATABASE_URL: db.url, AUTH_DISABLED: 'true' }, { listen: true });
  }, 60_000);

  const get = async (userSeq: string) => {
    const res = await fetch(`${gateway.url}/v1/users/${party}/user-batches/${userSeq}/proof`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('zero-padded batch numbers are 400 bad_request, like 1e3 (the canonical 1 is answered)', async () => {
    expect((await get('1')).status).toBe(200);
    for (const bad of ['01', '001', '00', '1e3', '0x1', '+1']) {
      const res = await get(bad);
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, 'bad_request']);
    }
  });

  it('a malformed chain record is a mismatch with reason `record`, never a 5xx', async () => {
    const ok = await get('2');
    expect(ok.body).toMatchObject({ status: 'verified' });
    const batchNum = ok.body.chain.batchNum as number;
    const [row] = await db.sql<Array<{ root: string; prev_root: string; event_count: number }>>`
      SELECT root, prev_root, event_count FROM user_batches WHERE party = ${party} AND user_seq = 2`;
    const [manifest] = await db.sql<Array<{ root: string }>>`SELECT root FROM batches WHERE batch_num = ${batchNum}`;
    const cases: Array<[string, () => Promise<unknown>]> = [
      ['user root not hex', () => db.sql`UPDATE user_batches SET root = ${'zz'.repeat(32)} WHERE party = ${party} AND user_seq = 2`],
      ['user root short', () => db.sql`UPDATE user_batches SET root = ${'ab'} WHERE party = ${party} AND user_seq = 2`],
      ['user root upper case', () => db.sql`UPDATE user_batches SET root = ${row!.root.toUpperCase()} WHERE party = ${party} AND user_seq = 2`],
      ['prev root not hex', () => db.sql`UPDATE user_batches SET prev_root = ${'not a root'} WHERE party = ${party} AND user_seq = 2`],
      ['negative event count', () => db.sql`UPDATE user_batches SET event_count = -3 WHERE party = ${party} AND user_seq = 2`],
      ['manifest root not hex', () => db.sql`UPDATE batches SET root = ${'g'.repeat(64)} WHERE batch_num = ${batchNum}`],
    ];
    const restore = async () => {
      await db.sql`UPDATE user_batches SET root = ${row!.root}, prev_root = ${row!.prev_root}, event_count = ${row!.event_count} WHERE party = ${party} AND user_seq = 2`;
      await db.sql`UPDATE batches SET root = ${manifest!.root} WHERE batch_num = ${batchNum}`;
    };
    try {
      for (const [name, corrupt] of cases) {
        await corrupt();
        const res = await get('2');
        expect([name, res.status, res.body.status, res.body.reason]).toEqual([name, 200, 'mismatch', 'record']);
        expect(typeof res.body.problem).toBe('string');
        await restore();
      }
    } finally {
      await restore();
    }
    expect((await get('2')).body).toMatchObject({ status: 'verified' });
  });
});
