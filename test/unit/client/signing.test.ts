// The client's WebCrypto signing, checked against RFC 8032 and against the gateway's own verifier.
import { describe, expect, it } from 'vitest';
import { keyPairFromSeed, localParty, MAX_TS_LEAD_MS, prepareSession, requestMessage, Session, signHex } from '../../../packages/client/src/index.js';
import { importPublicKey, verifySignature } from '../../../src/auth/signature.js';

// RFC 8032 §7.1, test 1.
const SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const EMPTY_SIG = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

function verifies(publicHex: string, message: string, sigHex: string): boolean {
  return verifySignature(importPublicKey(publicHex)!, Buffer.from(message, 'utf8'), Buffer.from(sigHex, 'hex'));
}

describe('client signing', () => {
  it('derives the RFC 8032 public key from a seed and signs the test vector exactly', async () => {
    const pair = await keyPairFromSeed(SEED);
    expect(pair.publicKeyHex).toBe(PUBLIC);
    expect(await signHex(pair.privateKey, '')).toBe(EMPTY_SIG);
  });

  it('builds a party id from a hint and the key, and refuses a bad hint', async () => {
    const p = await localParty('alice', SEED);
    expect(p.party).toBe(`alice::${PUBLIC}`);
    await expect(localParty('Alice')).rejects.toThrow(/party hint/);
  });

  it('has the party sign session-auth\\n<party>\\n<sessionKey>\\n<expiresAt>', async () => {
    const p = await localParty('bob');
    const prepared = await prepareSession(p, 60_000, 1_800_000_000_000);
    expect(prepared.body.expiresAt).toBe(1_800_000_060_000);
    expect(prepared.body.party).toBe(p.party);
    const message = `session-auth\n${p.party}\n${prepared.key.publicKeyHex}\n1800000060000`;
    expect(verifies(p.keys.publicKeyHex, message, prepared.body.signature)).toBe(true);
    await expect(prepareSession(p, 24 * 3600 * 1000 + 1)).rejects.toThrow(RangeError);
  });

  it('signs METHOD\\nTARGET\\nts\\nBODY with strictly increasing timestamps', async () => {
    const p = await localParty('carol');
    const prepared = await prepareSession(p, 60_000);
    const session = new Session(p.party, 'sess-1', Date.now() + 60_000, prepared.key.privateKey, () => 1_000);
    const a = await session.headers('post', '/v1/orders?x=1', '{"a":1}');
    const b = await session.headers('POST', '/v1/orders?x=1', '{"a":1}');
    expect(a['x-user']).toBe(p.party);
    expect(a['x-session-id']).toBe('sess-1');
    const [tsA, sigA] = a['x-session-sig'].split('.') as [string, string];
    const [tsB] = b['x-session-sig'].split('.') as [string, string];
    expect([tsA, tsB]).toEqual(['1000', '1001']);
    expect(verifies(prepared.key.publicKeyHex, requestMessage('POST', '/v1/orders?x=1', 1000, '{"a":1}'), sigA)).toBe(true);
    const auth = await session.streamAuth();
    const [tsS, sigS] = auth.sig.split('.') as [string, string];
    expect(verifies(prepared.key.publicKeyHex, `GET\n/v1/stream\n${tsS}\n`, sigS)).toBe(true);
  });
});

describe('client signatures are never repeated', () => {
  it('two Session objects of one session id never sign the same timestamp, even in one millisecond', async () => {
    const p = await localParty('dave');
    const prepared = await prepareSession(p, 60_000);
    // Two clients that restored one stored session, signing the same request at the same instant.
    const frozenClock = () => 2_000_000;
    const a = new Session(p.party, 'sess-shared', Date.now() + 60_000, prepared.key.privateKey, frozenClock);
    const b = new Session(p.party, 'sess-shared', Date.now() + 60_000, prepared.key.privateKey, frozenClock);
    const sigs = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).headers('GET', '/v1/orderbook?market=BTC-PERP', '')));
    const values = sigs.map((h) => h['x-session-sig']);
    expect(new Set(values).size).toBe(values.length);
  });

  it('a burst is signed at most MAX_TS_LEAD_MS ahead of the clock, then waits for it', async () => {
    const p = await localParty('erin');
    const prepared = await prepareSession(p, 60_000);
    const session = new Session(p.party, 'sess-burst', Date.now() + 60_000, prepared.key.privateKey);
    const out: Array<{ ts: number; at: number }> = [];
    // 1 500 requests as fast as possible: more than the lead allows within one clock millisecond.
    for (let i = 0; i < 1_500; i++) {
      const h = await session.headers('GET', '/v1/time', '');
      out.push({ ts: Number(h['x-session-sig'].split('.')[0]), at: Date.now() });
    }
    const ts = out.map((o) => o.ts);
    expect(new Set(ts).size).toBe(ts.length);
    for (let i = 1; i < ts.length; i++) expect(ts[i]!).toBeGreaterThan(ts[i - 1]!);
    expect(Math.max(...out.map((o) => o.ts - o.at))).toBeLessThanOrEqual(MAX_TS_LEAD_MS);
  });

  it('a clock corrected back by more than the window restarts from the clock instead of waiting', async () => {
    const p = await localParty('fred');
    const prepared = await prepareSession(p, 60_000);
    let clock = 5_000_000;
    const session = new Session(p.party, 'sess-skew', Date.now() + 60_000, prepared.key.privateKey, () => clock);
    const before = Number((await session.headers('GET', '/v1/time', ''))['x-session-sig'].split('.')[0]);
    expect(before).toBe(5_000_000);
    clock -= 120_000; // a two-minute skew learnt from a 401: everything signed before was refused
    const after = Number((await session.headers('GET', '/v1/time', ''))['x-session-sig'].split('.')[0]);
    expect(after).toBe(clock);
  });
});
