// Per-client stream caps behind a proxy (docs/security.md "Connections and slow clients"): the cap
// keys on the forwarded client, as the rate limits do, never on the proxy's own address; IPv6
// clients count by their /64; 0 turns the cap off. Through a real nginx (deploy/nginx/
// gateway.conf.template) with clients on distinct loopback addresses, and with a forwarding client
// writing X-Forwarded-For itself (IPv6 addresses cannot be loopback sources here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startNginx, type RunningNginx } from '../../../deploy/nginx.js';
import { addressGroup } from '../../../src/client-address.js';
import { closedPort, fleetServices } from '../../support/fleet.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

const haveNginx = await fleetServices({ nginx: true });

/** Opens a stream; resolves with 'open' or the refused upgrade's HTTP status. */
function openStream(url: string, options: { localAddress?: string; xff?: string } = {}): Promise<{ outcome: 'open' | number; ws: WebSocket }> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream`, {
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    headers: options.xff ? { 'x-forwarded-for': options.xff } : {},
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ outcome: 'open', ws }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ outcome: res.statusCode ?? 0, ws });
    });
    ws.once('error', reject);
  });
}

describe('stream caps behind a proxy', () => {
  const open: WebSocket[] = [];
  const gateways: TestGateway[] = [];
  let nginx: RunningNginx | null = null;
  const gateway = async (env: Record<string, string>) => {
    const gw = await startGateway({ TRUST_PROXY: '127.0.0.1', HTTP_MAX_CONNECTIONS_PER_IP: '0', ...env }, { listen: true });
    gateways.push(gw);
    return gw;
  };
  const stream = async (url: string, options: { localAddress?: string; xff?: string } = {}) => {
    const r = await openStream(url, options);
    open.push(r.ws);
    return r.outcome;
  };
  afterAll(async () => {
    for (const ws of open) ws.terminate();
    await nginx?.stop();
    for (const gw of gateways) await gw.close();
  });

  describe.skipIf(!haveNginx)('through nginx', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await gateway({ WS_MAX_CONNECTIONS_PER_IP: '2' });
      nginx = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: [new URL(gw.url).host], replicaKeepAliveMs: gw.deps.config.httpKeepAliveTimeoutMs });
    });

    it('one client at its cap does not shut out another client of the same proxy', async () => {
      expect(await stream(nginx!.url, { localAddress: '127.0.0.2' })).toBe('open');
      expect(await stream(nginx!.url, { localAddress: '127.0.0.2' })).toBe('open');
      expect(await stream(nginx!.url, { localAddress: '127.0.0.2' })).toBe(429);
      // Every connection reached the replica from nginx's address; the cap counted the clients.
      expect(await stream(nginx!.url, { localAddress: '127.0.0.3' })).toBe('open');
      expect(await stream(nginx!.url, { localAddress: '127.0.0.3' })).toBe('open');
      // A client cannot escape its cap by writing an address into X-Forwarded-For: nginx appends
      // the real one, and only nginx is trusted.
      expect(await stream(nginx!.url, { localAddress: '127.0.0.2', xff: '198.51.100.7' })).toBe(429);
    });
  });

  it('IPv6 clients behind a trusted proxy count by their /64', async () => {
    const gw = await gateway({ WS_MAX_CONNECTIONS_PER_IP: '2' });
    expect(await stream(gw.url, { xff: '2001:db8:0:1::a' })).toBe('open');
    expect(await stream(gw.url, { xff: '2001:db8:0:1:ffff::b' })).toBe('open');
    // A third address of the same /64: over the cap, as the rate limits would count it.
    expect(await stream(gw.url, { xff: '2001:db8:0:1:1234:5678:9abc:def0' })).toBe(429);
    // Another /64 and an IPv4 client are other clients.
    expect(await stream(gw.url, { xff: '2001:db8:0:2::a' })).toBe('open');
    expect(await stream(gw.url, { xff: '203.0.113.9' })).toBe('open');
    // The plain GET answers what the upgrade would.
    const probe = await fetch(`${gw.url}/v1/stream`, { headers: { 'x-forwarded-for': '2001:db8:0:1::c' } });
    expect(probe.status).toBe(429);
    expect(await probe.json()).toMatchObject({ code: 'too_many_connections' });
  });

  it('WS_MAX_CONNECTIONS_PER_IP=0 is no per-client cap', async () => {
    const gw = await gateway({ WS_MAX_CONNECTIONS_PER_IP: '0' });
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(await stream(gw.url, { xff: '203.0.113.50' }));
    expect(outcomes).toEqual(['open', 'open', 'open', 'open', 'open']);
  });

  it('groups addresses as the rate limits do', () => {
    expect(addressGroup('2001:DB8:0:1::a')).toBe('2001:db8:0:1::/64');
    expect(addressGroup('2001:db8:0:1:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:1::/64');
    expect(addressGroup('2001:db8:0:2::a')).not.toBe(addressGroup('2001:db8:0:1::a'));
    expect(addressGroup('::ffff:203.0.113.4')).toBe('203.0.113.4');
    expect(addressGroup('203.0.113.4')).toBe('203.0.113.4');
    expect(addressGroup('::1')).toBe('::/64');
  });
});
