// Who may open a stream: unknown query parameters, the per-address cap, the party proof's replay
// and clock rules, and the plain GET that answers exactly what a refused upgrade gets (or 426).
import { generateKeyPairSync, sign } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { httpFrom } from '../../support/http-from.js';
import { refused, wsUrl } from './helpers.js';
import { eventually } from '../../support/eventually.js';

/** Opens a stream from a chosen loopback address; resolves once open. */
function open(url: string, localAddress = '127.0.0.1'): Promise<WebSocket> {
  const ws = new WebSocket(url, { localAddress });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('stream admission', () => {
  let gw: TestGateway;
  let party: string;
  let proof: (tsMs: number) => string;
  const sockets: WebSocket[] = [];
  beforeAll(async () => {
    gw = await startGateway({ WS_MAX_CONNECTIONS_PER_IP: '2' }, { listen: true, overrides: { live: null } });
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ format: 'der', type: 'spki' });
    const hex = der.subarray(der.length - 32).toString('hex');
    party = `alice::${hex}`;
    gw.deps.sessions.add('sess-a', party, hex, Date.now() + 600_000);
    proof = (tsMs) => `${tsMs}.${sign(null, Buffer.from(`GET\n/v1/stream\n${tsMs}\n`), privateKey).toString('hex')}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.terminate();
    await gw.close();
  });
  const get = (query: string, from = '127.0.0.9') => httpFrom(from, `${gw.url}/v1/stream?${query}`, 'GET');
  const proofQuery = (sig: string) => `party=${party}&user=${party}&sessionId=sess-a&sig=${sig}`;

  it('refuses an unknown query parameter with 400 naming it, on the upgrade and the plain GET alike', async () => {
    const upgrade = await refused(gw.url, 'market=BTC-PERP');
    expect(upgrade.status).toBe(400);
    expect(upgrade.body.error).toContain('unknown query parameter "market"');
    const plain = await get('market=BTC-PERP');
    expect({ status: plain.status, body: plain.json }).toEqual(upgrade);
    expect(plain.headers['access-control-allow-origin']).toBe('*');
  });

  it('accepts the agreed parameters (epoch, heartbeat, snapshot): the plain GET answers 426', async () => {
    const res = await get('kinds=trade&since=0&epoch=e1&heartbeat=10&snapshot=false&control=true');
    expect(res.status).toBe(426);
    expect(res.json).toMatchObject({ code: 'upgrade_required' });
  });

  it('caps streams per client address (WS_MAX_CONNECTIONS_PER_IP) with 429 too_many_connections', async () => {
    const a = await open(wsUrl(gw.url), '127.0.0.2');
    const b = await open(wsUrl(gw.url), '127.0.0.2');
    sockets.push(a, b);
    const third = new WebSocket(wsUrl(gw.url), { localAddress: '127.0.0.2' });
    const status = await new Promise<number>((resolve) => {
      third.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      third.once('open', () => resolve(101));
      third.once('error', () => {});
    });
    expect(status).toBe(429);
    // The plain GET from that address says so; another address is not affected.
    const plain = await get('', '127.0.0.2');
    expect(plain.status).toBe(429);
    expect(plain.json).toMatchObject({ code: 'too_many_connections' });
    expect((await get('', '127.0.0.3')).status).toBe(426);
    sockets.push(await open(wsUrl(gw.url), '127.0.0.3'));
    // A closed stream frees its slot.
    a.close();
    // 426: a plain GET of the stream route is past admission (a slot was free) and asked to upgrade.
    await eventually(async () => (await get('', '127.0.0.2')).status === 426, { timeoutMs: 5_000, everyMs: 50, what: 'the closed stream\'s slot freed' });
  });

  it('refuses a zero-padded replay of a party proof', async () => {
    const sig = proof(Date.now());
    sockets.push(await open(wsUrl(gw.url, proofQuery(sig)), '127.0.0.4'));
    const replay = await refused(gw.url, proofQuery(sig));
    expect(replay).toMatchObject({ status: 401, body: { code: 'unauthorized', error: 'signature already used (replay)' } });
    const padded = await refused(gw.url, proofQuery(`0${sig}`));
    expect(padded).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('puts serverTime in the 401 of a proof outside the ±30 s window, on the upgrade and the plain GET', async () => {
    const before = Date.now();
    const upgrade = await refused(gw.url, proofQuery(proof(Date.now() - 60_000)));
    expect(upgrade.status).toBe(401);
    expect(upgrade.body.serverTime).toBeGreaterThanOrEqual(before);
    const plain = await get(proofQuery(proof(Date.now() + 60_000)));
    expect(plain.status).toBe(401);
    expect(plain.json).toMatchObject({ code: 'unauthorized', serverTime: expect.any(Number) });
  });

  it('answers the plain GET 401 for a party without proof, 426 for a fresh valid proof', async () => {
    expect((await get(`party=${party}`)).status).toBe(401);
    expect((await get(proofQuery(proof(Date.now())))).status).toBe(426);
  });
});
