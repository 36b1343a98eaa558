// The client's newer parts against real things: clock-skew correction of signed REST calls (a
// loopback server that checks the signature window like the gateway), the markets cache,
// non-extractable keys, persistence of a party and its session, and the published package's
// build (ESM + .d.ts) with generated wire types that match the gateway's schemas.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, generateKeyPair, keepPartySession, loadOrCreateParty, localParty, memoryStore, restoreSession, Session } from '../../../packages/client/src/index.js';
import { generateWireTypes, WIRE_TYPES_PATH } from '../../../packages/client/scripts/wire-types.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

let server: Server;
let base = '';
const serverOffsetMs = 45_000; // the device clock is 45 s behind the gateway
let marketsCalls = 0;
let sessions = 0;
const seenTs: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const now = Date.now() + serverOffsetMs;
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/v1/time') return json(200, { serverTime: now, iso: new Date(now).toISOString() });
    if (req.url === '/v1/markets') {
      marketsCalls++;
      return json(200, { items: [{ symbol: 'BTC-PERP' }], nextCursor: null });
    }
    if (req.url === '/v1/session-auth') {
      sessions++;
      return json(200, { ok: true, sessionId: `s${sessions}`, expiresAt: now + 3_600_000 });
    }
    if (req.headers['x-session-id'] === 'stale') return json(401, { error: 'session expired', code: 'unauthorized' });
    const sig = String(req.headers['x-session-sig'] ?? '');
    const ts = Number(sig.split('.')[0]);
    seenTs.push(ts);
    if (Math.abs(ts - now) > 30_000) return json(401, { error: 'signature timestamp is outside the ±30 s window', code: 'unauthorized', serverTime: now });
    json(200, { party: 'x', balance: '1.0000000000', asOfSeq: 1 });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('clock skew', () => {
  it('a signed call refused for its timestamp learns serverTime from the 401 and is signed again once', async () => {
    seenTs.length = 0;
    const client = new GatewayClient({ baseUrl: base, retry: { retries: 0 } });
    client.session = new Session('a::1', 's', Date.now() + 3_600_000 + serverOffsetMs, (await generateKeyPair()).privateKey, () => client.now());
    await expect(client.getBalance('a::1')).resolves.toMatchObject({ balance: '1.0000000000' });
    expect(seenTs).toHaveLength(2);
    expect(seenTs[1]! - seenTs[0]!).toBeGreaterThan(40_000);
    // Later calls are right the first time.
    await client.getBalance('a::1');
    expect(seenTs).toHaveLength(3);
  });

  it('syncTime() reads GET /v1/time and corrects every later signature', async () => {
    const client = new GatewayClient({ baseUrl: base });
    const offset = await client.syncTime();
    expect(Math.abs(offset - serverOffsetMs)).toBeLessThan(1_000);
    expect(Math.abs(client.now() - (Date.now() + serverOffsetMs))).toBeLessThan(1_000);
  });
});

describe('session expiry hook', () => {
  it('renews a session the gateway calls expired and signs the call again with the new one', async () => {
    const key = (await generateKeyPair()).privateKey;
    const renewed: string[] = [];
    const client: GatewayClient = new GatewayClient({
      baseUrl: base,
      retry: { retries: 0 },
      onSessionExpired: async (old): Promise<Session> => {
        renewed.push(old.sessionId);
        return new Session(old.party, 'fresh', Date.now() + serverOffsetMs + 3_600_000, key, () => client.now());
      },
    });
    await client.syncTime();
    client.session = new Session('a::1', 'stale', Date.now() + serverOffsetMs + 3_600_000, key, () => client.now());
    await expect(client.getBalance('a::1')).resolves.toMatchObject({ balance: '1.0000000000' });
    expect(renewed).toEqual(['stale']);
    expect(client.session?.sessionId).toBe('fresh');
  });

  it('renews before signing once the session has expired by the corrected clock', async () => {
    const key = (await generateKeyPair()).privateKey;
    let renewals = 0;
    const client: GatewayClient = new GatewayClient({
      baseUrl: base,
      onSessionExpired: async (old): Promise<Session> => {
        renewals++;
        return new Session(old.party, 'next', Date.now() + serverOffsetMs + 3_600_000, key, () => client.now());
      },
    });
    await client.syncTime();
    // Valid by the device clock (45 s behind), expired by the gateway's.
    client.session = new Session('a::1', 'old', Date.now() + 10_000, key, () => client.now());
    await Promise.all([client.getBalance('a::1'), client.getBalance('a::1')]);
    expect(renewals).toBe(1); // concurrent callers share one renewal
    expect(client.session?.sessionId).toBe('next');
  });
});

describe('markets cache', () => {
  it('answers listMarkets from memory within marketsCacheMs, and asks again when fresh is wanted', async () => {
    marketsCalls = 0;
    const client = new GatewayClient({ baseUrl: base, marketsCacheMs: 60_000 });
    await client.listMarkets();
    await client.listMarkets();
    expect(marketsCalls).toBe(1);
    await client.listMarkets({ fresh: true });
    expect(marketsCalls).toBe(2);
  });
});

describe('keys and persistence', () => {
  it('makes non-extractable private keys', async () => {
    const { privateKey } = await generateKeyPair();
    expect(privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('pkcs8', privateKey)).rejects.toThrow();
    const party = await localParty('bob');
    expect(party.keys.privateKey.extractable).toBe(false);
  });

  it('keeps a party and its session across a "reload" (a new client on the same store)', async () => {
    const store = memoryStore();
    sessions = 0;
    const first = new GatewayClient({ baseUrl: base });
    const { signer, session } = await keepPartySession(first, store, 'carol');
    expect(sessions).toBe(1);
    // Reload: same party, same session, no new session-auth.
    const second = new GatewayClient({ baseUrl: base });
    const again = await keepPartySession(second, store, 'carol');
    expect(again.signer.party).toBe(signer.party);
    expect(again.session.sessionId).toBe(session.sessionId);
    expect(sessions).toBe(1);
    expect(await again.signer.sign('x')).toMatch(/^[0-9a-f]{128}$/);
    expect((await loadOrCreateParty(store, 'carol')).party).toBe(signer.party);
    // An expired saved session is not restored.
    const late = new GatewayClient({ baseUrl: base, now: () => Date.now() + 10 * 3_600_000 });
    expect(await restoreSession(late, store, signer.party)).toBeNull();
  });
});

describe('the published package', () => {
  it('its wire types are generated from the gateway schemas and are current', () => {
    expect(readFileSync(WIRE_TYPES_PATH, 'utf8')).toBe(generateWireTypes());
  });

  it('builds to ESM + .d.ts under dist/, which package.json exports', { timeout: 120_000 }, () => {
    const pkgDir = resolve(ROOT, 'packages/client');
    rmSync(resolve(pkgDir, 'dist'), { recursive: true, force: true });
    execFileSync(process.execPath, [resolve(ROOT, 'node_modules/typescript/bin/tsc'), '-p', resolve(pkgDir, 'tsconfig.build.json')], { stdio: 'pipe' });
    const pkg = JSON.parse(readFileSync(resolve(pkgDir, 'package.json'), 'utf8')) as { private?: boolean; exports: Record<string, { import: string; types: string }>; files: string[] };
    expect(pkg.private).toBeUndefined();
    expect(pkg.files).toContain('dist');
    for (const entry of Object.values(pkg.exports)) {
      expect(existsSync(resolve(pkgDir, entry.import))).toBe(true);
      expect(existsSync(resolve(pkgDir, entry.types))).toBe(true);
    }
    expect(readFileSync(resolve(pkgDir, 'dist/index.d.ts'), 'utf8')).toContain('StreamClient');
  });
});
