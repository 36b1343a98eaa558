// TRUST_PROXY: behind a proxy `request.ip` is the client named in X-Forwarded-For, trusted only as
// far as the setting says; the rate limit (keyed on the IP for anonymous callers) shows which IP it saw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig, ConfigError } from '../../../src/config/env.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { okJson, startFakeEngine, type FakeEngine } from '../trading/fake-engine.js';

async function book(url: string, xff?: string): Promise<number> {
  const res = await request(`${url}/v1/orderbook?market=BTC-PERP`, { headers: xff ? { 'x-forwarded-for': xff } : {} });
  await res.body.dump();
  return res.statusCode;
}

describe('TRUST_PROXY', () => {
  let engine: FakeEngine;
  const gws: TestGateway[] = [];
  beforeAll(async () => {
    engine = await startFakeEngine();
    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
  });
  afterAll(async () => {
    for (const g of gws) await g.close();
    await engine.close();
  });
  const gateway = async (trust?: string) => {
    const gw = await startGateway({ ENGINE_BASE_URL: engine.url, RATE_LIMIT_IP_MAX: '2', TRUST_PROXY: trust }, { listen: true });
    gws.push(gw);
    return gw;
  };

  it('with one trusted hop, each forwarded client has its own bucket', async () => {
    const gw = await gateway('1');
    expect([await book(gw.url, '203.0.113.1'), await book(gw.url, '203.0.113.1'), await book(gw.url, '203.0.113.1')]).toEqual([200, 200, 429]);
    expect(await book(gw.url, '203.0.113.2')).toBe(200);
    // A client cannot pick its address by prepending one: only the hop nginx appended is trusted.
    expect(await book(gw.url, '198.51.100.9, 203.0.113.1')).toBe(429);
  });

  it('with the proxy address listed, the same holds; an unlisted peer is taken at its socket address', async () => {
    const gw = await gateway('127.0.0.1/8, ::1');
    expect([await book(gw.url, '203.0.113.5'), await book(gw.url, '203.0.113.5'), await book(gw.url, '203.0.113.5')]).toEqual([200, 200, 429]);
    expect(await book(gw.url, '203.0.113.6')).toBe(200);
    const other = await gateway('192.0.2.1');
    expect([await book(other.url, '203.0.113.7'), await book(other.url, '203.0.113.8'), await book(other.url, '203.0.113.9')]).toEqual([200, 200, 429]);
  });

  it('unset: X-Forwarded-For is ignored and every caller shares the socket address', async () => {
    const gw = await gateway(undefined);
    expect([await book(gw.url, '203.0.113.10'), await book(gw.url, '203.0.113.11'), await book(gw.url, '203.0.113.12')]).toEqual([200, 200, 429]);
  });

  it('refuses a malformed value at start', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'nginx' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16' }).trustProxy).toEqual(['10.0.0.1', '10.1.0.0/16']);
  });
});
