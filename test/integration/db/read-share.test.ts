// The database read pool's fair share over HTTP and a real PostgreSQL (src/db/read-share.ts,
// ADR 0380): a request's reads count as its client address's, past DB_ADDRESS_QUEUE waiting the
// next is refused 429 before it is sent, and another address is not held up. The reads are held in
// PostgreSQL itself (a table locked by another transaction), not in the gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';
import { lockTable, waitingReads } from '../stream/helpers.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true', DB_POOL_MAX: '4', DB_ADDRESS_IN_FLIGHT: '1', DB_ADDRESS_QUEUE: '1' });
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

const get = (url: string, remoteAddress: string) => gw.app.inject({ method: 'GET', url, remoteAddress });

describe('the database read pool shared between client addresses', () => {
  it('one address: one read at a time, one waiting, the next refused 429 database_reads; another address reads meanwhile', async () => {
    if (db.kind === 'pglite') return; // one embedded connection: a lock would block the gateway's read and this test alike
    const lock = await lockTable(db, 'events');
    try {
      const held = get('/v1/events?limit=5', '10.1.0.1');
      await eventually(async () => (await waitingReads(db, 'events')) === 1, { what: "the first read held by the lock in PostgreSQL" });
      const waiting = get('/v1/events?limit=6', '10.1.0.1');
      await eventually(() => gw.deps.db.share.waiting === 1, { what: 'the second read waiting for its turn in the gateway' });
      const refused = await get('/v1/events?limit=7', '10.1.0.1');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 'budget_exhausted', budget: 'database_reads', retryAfterS: 1 });
      expect(refused.headers['retry-after']).toBe('1');
      // Only one of the address's reads reached PostgreSQL; the other waits its turn in the gateway.
      expect(await waitingReads(db, 'events')).toBe(1);
      // Another address's read of another table is answered at once, though the first holds a turn.
      const other = await get('/v1/batches?limit=5', '10.2.0.1');
      expect(other.statusCode).toBe(200);
      await lock.release();
      expect((await held).statusCode).toBe(200);
      expect((await waiting).statusCode).toBe(200);
    } finally {
      await lock.release();
    }
    // The turns are given back: the address reads again.
    expect((await get('/v1/events?limit=5', '10.1.0.1')).statusCode).toBe(200);
  });
});
