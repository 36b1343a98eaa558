// Retries and error flags of the client against a real loopback HTTP server that fails on demand
// and records every attempt.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayClient, GatewayError, localParty, prepareSession, Session } from '../../../packages/client/src/index.js';
import { importPublicKey, signedPayload, verifySignature } from '../../../src/auth/signature.js';

interface Attempt {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Plan = (n: number, a: Attempt) => { status: number; body: string } | 'destroy';

let server: Server;
let base = '';
let attempts: Attempt[] = [];
let plan: Plan = () => ({ status: 200, body: '{}' });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const a = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
      attempts.push(a);
      const answer = plan(attempts.length, a);
      if (answer === 'destroy') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': answer.body.startsWith('<') ? 'text/html' : 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  attempts = [];
});

const sleeps: number[] = [];
function client(retries = 3, extra: Partial<ConstructorParameters<typeof GatewayClient>[0]> = {}) {
  sleeps.length = 0;
  return new GatewayClient({
    baseUrl: base,
    retry: { retries, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) },
    ...extra,
  });
}

async function withSession(c: GatewayClient) {
  const p = await localParty('retry');
  const prepared = await prepareSession(p, 60_000);
  c.session = new Session(p.party, 'sess-r', Date.now() + 60_000, prepared.key.privateKey);
  return { party: p.party, key: prepared.key.publicKeyHex };
}

describe('client retries', () => {
  it('retries 5xx with backoff until success, re-signing every attempt', async () => {
    const c = client();
    const { party, key } = await withSession(c);
    plan = (n) => (n <= 2 ? { status: 503, body: '{"error":"db down","code":"database_unavailable"}' } : { status: 200, body: '{"items":[],"nextCursor":null}' });
    const page = await c.listUserFills(party, { limit: 5 });
    expect(page).toEqual({ items: [], nextCursor: null });
    expect(attempts).toHaveLength(3);
    expect(sleeps).toEqual([75, 150]);
    const sigs = attempts.map((a) => a.headers['x-session-sig'] as string);
    expect(new Set(sigs).size).toBe(3);
    for (const a of attempts) {
      expect(a.url).toBe(`/v1/users/${encodeURIComponent(party)}/fills?limit=5`);
      const [ts, sig] = (a.headers['x-session-sig'] as string).split('.') as [string, string];
      expect(verifySignature(importPublicKey(key)!, signedPayload('GET', a.url, Number(ts), ''), Buffer.from(sig, 'hex'))).toBe(true);
    }
  });

  it('retries network failures, then raises a network GatewayError when they persist', async () => {
    const c = client(2);
    plan = () => 'destroy';
    const err = (await c.listBatches().catch((e: unknown) => e)) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(attempts).toHaveLength(3);
    expect(err.status).toBe(0);
    expect(err.isNetwork).toBe(true);
    expect(err.body.code).toBe('network_error');
  });

  it('gives up after the configured retries with the last 5xx, flagged isServer', async () => {
    const c = client(2);
    plan = () => ({ status: 502, body: '<html><h1>502 Bad Gateway</h1></html>' });
    const err = (await c.getVault().catch((e: unknown) => e)) as GatewayError;
    expect(attempts).toHaveLength(3);
    expect(err.status).toBe(502);
    expect(err.isServer).toBe(true);
    expect(err.path).toBe('/v1/vault');
    expect(err.body).toEqual({ error: 'HTTP 502: <html><h1>502 Bad Gateway</h1></html>', code: 'http_error' });
  });

  it.each([400, 401, 403, 404, 429])('never retries a %i', async (status) => {
    const c = client();
    plan = () => ({ status, body: JSON.stringify({ error: `e${status}`, code: 'x' }) });
    const err = (await c.listDeposits({ user: 'u' }).catch((e: unknown) => e)) as GatewayError;
    expect(attempts).toHaveLength(1);
    expect(err.status).toBe(status);
    expect(err.body).toEqual({ error: `e${status}`, code: 'x' });
    expect(err.isNotFound).toBe(status === 404);
    expect(err.isUnauthorized).toBe(status === 401 || status === 403);
    expect(err.isServer).toBe(false);
  });

  it('does not retry order placement unless retryOrders is set', async () => {
    plan = () => ({ status: 504, body: '{"error":"the engine did not answer in time","code":"engine_timeout"}' });
    const order = { market: 'BTC-PERP', side: 'buy', type: 'limit', size: '1', price: '10' } as const;
    await expect(client().placeOrder(order)).rejects.toMatchObject({ status: 504 });
    expect(attempts).toHaveLength(1);
    attempts = [];
    await expect(client(2, { retryOrders: true }).placeOrder(order)).rejects.toMatchObject({ status: 504 });
    expect(attempts).toHaveLength(3);
  });

  it('returns ok:false rejections as values, not errors', async () => {
    const c = client();
    await withSession(c);
    plan = () => ({ status: 200, body: '{"ok":false,"code":"0x0C","error":"below minimum notional"}' });
    const answer = await c.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.001', price: '1' });
    expect(answer).toEqual({ ok: false, code: '0x0C', error: 'below minimum notional' });
    expect(attempts[0]!.body).toBe('{"market":"BTC-PERP","side":"buy","type":"limit","size":"0.001","price":"1"}');
    expect(attempts[0]!.headers['content-type']).toBe('application/json');
  });
});
