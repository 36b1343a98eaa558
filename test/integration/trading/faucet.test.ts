// The faucet against the real indexer schema (cooldown and balance from the mirror) and a fake
// engine admin API that records what it was asked.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateKeyPair, makeParty, signHex, type KeyPair, type Party } from '../../sandbox/engine/helpers.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const TOKEN = 'faucet-admin-token';
let lastTs = 0;

interface User {
  party: Party;
  key: KeyPair;
  sessionId: string;
}

function newUser(gw: TestGateway, hint: string): User {
  const u = { party: makeParty(hint), key: generateKeyPair(), sessionId: `sess-${hint}-${Math.random().toString(36).slice(2)}` };
  gw.deps.sessions.add(u.sessionId, u.party.id, u.key.publicKeyHex, Date.now() + 3_600_000);
  return u;
}

async function faucet(gw: TestGateway, u: User, path = `/v1/users/${u.party.id}/faucet`, method = 'POST') {
  lastTs = Math.max(lastTs + 1, Date.now());
  const sig = signHex(u.key.privateKey, `${method}\n${path}\n${lastTs}\n`);
  const res = await fetch(gw.url + path, {
    method,
    headers: { 'x-user': u.party.id, 'x-session-id': u.sessionId, 'x-session-sig': `${lastTs}.${sig}` },
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as any };
}

describe('faucet', () => {
  let db: TestDatabase;
  let engine: FakeEngine;
  let gw: TestGateway;
  let seq = 1000;

  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  async function faucetDeposit(party: string, at: string) {
    seq++;
    await db.sql`INSERT INTO deposits (seq, deposit_id, party, amount, source, tx_id, created_at) VALUES (${seq}, ${`d${seq}`}, ${party}, 1000, 'faucet', null, ${at})`;
    await db.sql`INSERT INTO events (seq, kind, ts, party, payload) VALUES (${seq}, 'inbound.deposit', ${at}, ${party},
      ${db.sql.json({ depositId: `d${seq}`, amount: '1000.0000000000', source: 'faucet', txId: null, newBalance: '1000.0000000000' })})`;
  }
  async function fill(party: string, newBalance: string) {
    seq++;
    await db.sql`INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl, new_balance, position_id, created_at)
      VALUES (${seq}, 0, ${`${seq}-0`}, ${`m${seq}`}, 'o1', ${party}, 'BTC-PERP', 'buy', 'taker', 1, 100, 0, 0, ${newBalance}, 'pos1', ${ago(0)})`;
  }
  async function balanceEvent(party: string, kind: string, newBalance: string) {
    seq++;
    await db.sql`INSERT INTO events (seq, kind, ts, party, payload) VALUES (${seq}, ${kind}, ${ago(0)}, ${party}, ${db.sql.json({ withdrawalId: 'w', depositId: 'd', newBalance })})`;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    engine = await startFakeEngine();
    gw = await startGateway(
      { DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: TOKEN, FAUCET_ENABLED: 'true', FAUCET_AMOUNT: '1000', FAUCET_CEILING: '10000', FAUCET_COOLDOWN_S: '3600' },
      { listen: true },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
    await db?.drop();
  });
  beforeEach(() => {
    engine.requests.length = 0;
    engine.respond = () => okJson({ ok: true, newBalance: '1000.0000000000' });
  });

  it('tops up a new party through the engine admin faucet with the admin token', async () => {
    const u = newUser(gw, 'fresh');
    const res = await faucet(gw, u);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ party: u.party.id, amount: '1000.0000000000', newBalance: '1000.0000000000' });
    expect(engine.requests).toHaveLength(1);
    const got = engine.requests[0]!;
    expect(got).toMatchObject({ method: 'POST', url: '/v1/admin/faucet' });
    expect(got.headers.authorization).toEqual([`Bearer ${TOKEN}`]);
    expect(JSON.parse(got.body.toString())).toEqual({ party: u.party.id, amount: '1000.0000000000' });
    expect(got.headers['x-user']).toBeUndefined();
  });

  it('refuses a second top-up within the cooldown (this replica, before the mirror has it)', async () => {
    const u = newUser(gw, 'twice');
    expect((await faucet(gw, u)).status).toBe(200);
    const again = await faucet(gw, u);
    expect(again.status).toBe(429);
    expect(again.json.code).toBe('rate_limited');
    expect(again.json.retryAfterS).toBeGreaterThanOrEqual(3599);
    expect(again.json.retryAfterS).toBeLessThanOrEqual(3600);
    expect(again.retryAfter).toBe(String(again.json.retryAfterS));
    expect(engine.requests).toHaveLength(1);
  });

  it('derives the cooldown from the mirror, so it holds across restarts and replicas', async () => {
    const u = newUser(gw, 'mirror');
    await faucetDeposit(u.party.id, ago(600_000)); // ten minutes ago, made by "another replica"
    const res = await faucet(gw, u);
    expect(res.status).toBe(429);
    expect(res.json.retryAfterS).toBeGreaterThanOrEqual(2998);
    expect(res.json.retryAfterS).toBeLessThanOrEqual(3000);
    expect(res.json.error).toBe(`faucet cooldown: one top-up per 3600 s; retry in ${res.json.retryAfterS} s`);
    expect(engine.requests).toHaveLength(0);
  });

  it('GET tells the cooldown left: none for a new party, the time to the end after a grant, none once it passed', async () => {
    const u = newUser(gw, 'status');
    const path = `/v1/users/${u.party.id}/faucet`;
    expect((await faucet(gw, u, path, 'GET')).json).toEqual({ party: u.party.id, amount: '1000.0000000000', cooldownS: 3600, retryAfterS: 0, nextAt: null });
    await faucetDeposit(u.party.id, ago(600_000)); // ten minutes ago
    const during = await faucet(gw, u, path, 'GET');
    expect(during.status).toBe(200);
    expect(during.json.retryAfterS).toBeGreaterThan(2990);
    expect(during.json.retryAfterS).toBeLessThanOrEqual(3000);
    expect(Date.parse(during.json.nextAt) - Date.now()).toBeGreaterThan(2_990_000);
    // The POST agrees: refused, with the same time left.
    const post = await faucet(gw, u);
    expect(post.status).toBe(429);
    expect(Math.abs(post.json.retryAfterS - during.json.retryAfterS)).toBeLessThanOrEqual(2);
    const other = newUser(gw, 'status-old');
    await faucetDeposit(other.party.id, ago(3_601_000));
    expect((await faucet(gw, other, `/v1/users/${other.party.id}/faucet`, 'GET')).json).toMatchObject({ retryAfterS: 0, nextAt: null });
  });

  it('allows a top-up once the cooldown has passed, and ignores chain deposits', async () => {
    const u = newUser(gw, 'later');
    await faucetDeposit(u.party.id, ago(3_601_000));
    seq++;
    await db.sql`INSERT INTO deposits (seq, deposit_id, party, amount, source, created_at) VALUES (${seq}, 'chain', ${u.party.id}, 5, 'chain', ${ago(1000)})`;
    expect((await faucet(gw, u)).status).toBe(200);
  });

  it('refuses with 403 when the last fill balance is at or above the ceiling', async () => {
    const u = newUser(gw, 'rich');
    await fill(u.party.id, '10000');
    const res = await faucet(gw, u);
    expect(res).toMatchObject({
      status: 403,
      json: {
        error: 'balance 10000.0000000000 is at or above the faucet ceiling 10000.0000000000',
        code: 'forbidden',
        balance: '10000.0000000000',
        ceiling: '10000.0000000000',
      },
    });
    expect(engine.requests).toHaveLength(0);
  });

  it('uses the latest balance-changing event: a later withdrawal brings the party under the ceiling', async () => {
    const u = newUser(gw, 'spent');
    await fill(u.party.id, '20000');
    await balanceEvent(u.party.id, 'engine.approve_submitted', '9999.9999999999');
    expect((await faucet(gw, u)).status).toBe(200);
  });

  it('uses the latest balance-changing event: a later deposit lifts the party to the ceiling', async () => {
    const u = newUser(gw, 'topped');
    await fill(u.party.id, '10');
    await balanceEvent(u.party.id, 'inbound.deposit', '10000.0000000000');
    expect((await faucet(gw, u)).status).toBe(403);
  });

  it('lets only one of two concurrent requests of a party through', async () => {
    const u = newUser(gw, 'race');
    const [a, b] = await Promise.all([faucet(gw, u), faucet(gw, u)]);
    expect([a.status, b.status].sort()).toEqual([200, 429]);
    expect(engine.requests).toHaveLength(1);
  });

  it('is guarded: unsigned 401, another party 403, engine untouched', async () => {
    const u = newUser(gw, 'guarded');
    const other = newUser(gw, 'other');
    const unsigned = await fetch(`${gw.url}/v1/users/${u.party.id}/faucet`, { method: 'POST' });
    expect(unsigned.status).toBe(401);
    const cross = await faucet(gw, other, `/v1/users/${u.party.id}/faucet`);
    expect(cross).toMatchObject({ status: 403, json: { code: 'forbidden' } });
    expect(engine.requests).toHaveLength(0);
  });

  it('answers 502 engine_unavailable when the engine admin API refuses the token', async () => {
    engine.respond = () => okJson({ error: 'unauthorized' }, 401);
    const u = newUser(gw, 'token');
    const res = await faucet(gw, u);
    expect(res).toMatchObject({ status: 502, json: { error: 'the engine faucet answered HTTP 401', code: 'engine_unavailable', engineStatus: 401 } });
    // A failed grant does not start the cooldown.
    engine.respond = () => okJson({ ok: true, newBalance: '1000.0000000000' });
    expect((await faucet(gw, u)).status).toBe(200);
  });

  it('passes an engine ok:false rejection through as a value', async () => {
    engine.respond = () => okJson({ ok: false, code: 'bad_amount', error: 'no' });
    const res = await faucet(gw, newUser(gw, 'refused'));
    expect(res).toEqual({ status: 200, retryAfter: null, json: { ok: false, code: 'bad_amount', error: 'no' } });
  });
});

describe('faucet configuration', () => {
  it('answers 404 when disabled, whatever the auth', async () => {
    const gw = await startGateway({ FAUCET_ENABLED: 'false' }, { listen: true });
    try {
      const res = await fetch(`${gw.url}/v1/users/${makeParty('x').id}/faucet`, { method: 'POST' });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'the faucet is not enabled on this gateway (FAUCET_ENABLED)', code: 'not_found' });
    } finally {
      await gw.close();
    }
  });

  it('answers 502 when ENGINE_ADMIN_TOKEN is unset (no database: cooldown from memory only)', async () => {
    const gw = await startGateway({ FAUCET_ENABLED: 'true', AUTH_DISABLED: 'true' }, { listen: true });
    try {
      const res = await fetch(`${gw.url}/v1/users/${makeParty('y').id}/faucet`, { method: 'POST' });
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ error: 'the faucet needs ENGINE_ADMIN_TOKEN to call the engine admin faucet', code: 'engine_unavailable' });
    } finally {
      await gw.close();
    }
  });
});
