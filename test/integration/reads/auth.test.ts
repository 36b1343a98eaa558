// With auth enabled, every party-scoped read runs the authenticate and own-party guards:
// 401 without a signed request, 403 for another party's path, 200 for the party's own path.
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { B, insertFixtures } from './fixtures.js';

function keyPair(): { hex: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { hex: der.subarray(der.length - 32).toString('hex'), privateKey };
}

const partyKey = keyPair();
const sessionKey = keyPair();
const PARTY = `dave::${partyKey.hex}`;
const SESSION = 'sess-reads-1';

function signed(path: string, party = PARTY): Record<string, string> {
  const ts = Date.now();
  const sig = sign(null, Buffer.from(`GET\n${path}\n${ts}\n`, 'utf8'), sessionKey.privateKey).toString('hex');
  return { 'x-user': party, 'x-session-id': SESSION, 'x-session-sig': `${ts}.${sig}` };
}

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase();
  await insertFixtures(db.sql);
  await db.sql`INSERT INTO sessions (session_id, party, public_key, expires_at, created_seq)
    VALUES (${SESSION}, ${PARTY}, ${sessionKey.hex}, ${new Date(Date.now() + 3_600_000).toISOString()}, 99)`;
  await db.sql`INSERT INTO deposits (seq, deposit_id, party, amount, source, tx_id, created_at) VALUES (90, 'd-90', ${PARTY}, 42, 'chain', NULL, now())`;
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'false' });
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

const SUFFIXES = ['deposits', 'withdrawals', 'withdrawal-counter', 'user-batches', 'user-batches/1/proof', 'user-batches/proofs', 'orders', 'fills', 'positions', 'triggers', 'balance', 'account/as-of?seq=1'];

describe('guards on party-scoped reads', () => {
  it('401 without the signed-request headers, on every party route', async () => {
    for (const s of SUFFIXES) {
      const res = await gw.app.inject(`/v1/users/${PARTY}/${s}`);
      expect([s, res.statusCode, res.json().code]).toEqual([s, 401, 'unauthorized']);
    }
  });

  it('403 for another party path with a valid signature', async () => {
    for (const s of SUFFIXES) {
      const path = `/v1/users/${B}/${s}`;
      const res = await gw.app.inject({ url: path, headers: signed(path) });
      expect([s, res.statusCode, res.json()]).toEqual([s, 403, { error: 'X-User must equal the :party of the path', code: 'forbidden' }]);
    }
  });

  it('200 for the own path with a valid signature; 401 for a bad signature', async () => {
    const path = `/v1/users/${PARTY}/deposits?limit=5`;
    const ok = await gw.app.inject({ url: path, headers: signed(path) });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().items.map((d: { seq: number; amount: string }) => [d.seq, d.amount])).toEqual([[90, '42.0000000000']]);
    const headers = signed(`/v1/users/${PARTY}/deposits?limit=6`); // signed another target
    expect((await gw.app.inject({ url: path, headers })).statusCode).toBe(401);
  });

  it('public reads need no headers', async () => {
    expect((await gw.app.inject('/v1/fills')).statusCode).toBe(200);
    expect((await gw.app.inject(`/v1/deposits?user=${PARTY}`)).statusCode).toBe(200);
  });
});
