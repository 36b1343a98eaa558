// Compression bombs counted per client address (WS_DEFLATE_OVERSIZE_PER_IP, ADR 0311): once an
// address has had that many deflate connections closed 1009 for a message inflating past
// WS_CLIENT_MESSAGE_MAX_BYTES in a window, its further deflate upgrades are refused 429
// budget_exhausted `deflate_oversize` before the handshake; its plain connections and another
// address's deflate connections are accepted. Real WebSocket clients from loopback addresses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { opened, streamFrom, type Refused } from '../../support/stream-from.js';
import { httpFrom } from '../../support/http-from.js';

/** A connection from `from`, asking for deflate and offering it, or neither. */
const open = (url: string, from: string, deflate: boolean) => streamFrom(url, from, deflate ? 'compress=deflate' : '', deflate);

describe('compression bombs per client address', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ WS_CLIENT_MESSAGE_MAX_BYTES: '4096', WS_DEFLATE_OVERSIZE_PER_IP: '2' }, { listen: true });
  });
  afterAll(async () => gw.close());

  it('refuses an address its deflate upgrades after two bombs, and nothing else', async () => {
    for (let i = 0; i < 2; i++) {
      const bomb = opened(await open(gw.url, '127.0.0.2', true));
      expect(bomb.ws.extensions).toContain('permessage-deflate');
      bomb.ws.send(JSON.stringify({ id: `bomb-${i}`, op: 'subscribe', pad: ' '.repeat(3 * 4096) }));
      expect(await bomb.closed).toBe(1009);
    }
    const refused = await open(gw.url, '127.0.0.2', true);
    expect('status' in refused && refused.status).toBe(429);
    expect((refused as Refused).body).toMatchObject({ code: 'budget_exhausted', budget: 'deflate_oversize' });
    expect(Number((refused as Refused).body.retryAfterS)).toBeGreaterThanOrEqual(1);
    // The plain GET of the same URL says the refusal an upgrade would get (the upgrade's own words).
    const probe = await httpFrom('127.0.0.2', `${gw.url}/v1/stream?compress=deflate`, 'GET');
    expect(probe.status).toBe(429);
    expect(probe.json).toMatchObject({ code: 'budget_exhausted', budget: 'deflate_oversize' });
    expect(Number(probe.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // The same address without compression, and another address with it, are accepted.
    const plain = opened(await open(gw.url, '127.0.0.2', false));
    const other = opened(await open(gw.url, '127.0.0.3', true));
    expect(other.ws.extensions).toContain('permessage-deflate');
    plain.ws.close();
    other.ws.close();
  });

  it('counts only messages past the bound: a deflate client within it keeps connecting', async () => {
    for (let i = 0; i < 3; i++) {
      const c = opened(await open(gw.url, '127.0.0.4', true));
      c.ws.send(JSON.stringify({ id: `ok-${i}`, op: 'subscribe', kinds: ['trade'] }));
      await new Promise<void>((resolve) => c.ws.once('message', () => resolve()));
      c.ws.close();
      expect(await c.closed).toBe(1005);
    }
    expect('ws' in (await open(gw.url, '127.0.0.4', true))).toBe(true);
  });
});
