// Deflate stream connections bounded per client address (WS_DEFLATE_CONNECTIONS_PER_IP, ADR 0366):
// past the bound an upgrade asking `compress=deflate` and offering the extension is refused before
// the handshake, 429 budget_exhausted `deflate_connections` with Retry-After (and the plain GET of
// the same URL says so; the upgrade's refusal is written after DEFLATE_REFUSAL_DELAY_MS), while the address's plain connections, a connection that asks for deflate
// without offering it, and another address's deflate connections are accepted; a deflate
// connection that closes frees its place. Real WebSocket clients from loopback addresses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { opened, streamFrom, type Refused } from '../../support/stream-from.js';
import { httpFrom } from '../../support/http-from.js';
import { eventually } from '../../support/eventually.js';
import { DEFLATE_REFUSAL_DELAY_MS } from '../../../src/http/stream-upgrade.js';

/** A stream connection from `from`: asking compress=deflate (`ask`) and offering the extension (`offer`). */
const open = (url: string, from: string, ask: boolean, offer = ask) => streamFrom(url, from, `kinds=trade${ask ? '&compress=deflate' : ''}`, offer);

describe('deflate connections per client address', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ WS_DEFLATE_CONNECTIONS_PER_IP: '2' }, { listen: true });
  });
  afterAll(async () => gw.close());

  it('refuses the deflate upgrade past the bound before the handshake, and nothing else', async () => {
    const held = [opened(await open(gw.url, '127.0.0.2', true)), opened(await open(gw.url, '127.0.0.2', true))];
    for (const h of held) expect(h.ws.extensions).toContain('permessage-deflate');

    const asked = Date.now();
    const refused = await open(gw.url, '127.0.0.2', true);
    expect('status' in refused && refused.status).toBe(429);
    // Answered after DEFLATE_REFUSAL_DELAY_MS, as a bomber's: reconnecting at once gains nothing.
    expect(Date.now() - asked).toBeGreaterThanOrEqual(DEFLATE_REFUSAL_DELAY_MS - 50);
    expect((refused as Refused).body).toMatchObject({ code: 'budget_exhausted', budget: 'deflate_connections', retryAfterS: 1 });
    expect((refused as Refused).body.error).toMatch(/WS_DEFLATE_CONNECTIONS_PER_IP.*plain connections are accepted/);
    expect((refused as Refused).headers['retry-after']).toBe('1');
    // The plain GET of the same URL (how a browser learns why) answers the same refusal.
    const probe = await httpFrom('127.0.0.2', `${gw.url}/v1/stream?kinds=trade&compress=deflate`, 'GET');
    expect(probe.status).toBe(429);
    expect(probe.json).toMatchObject({ code: 'budget_exhausted', budget: 'deflate_connections' });
    expect((await httpFrom('127.0.0.2', `${gw.url}/v1/stream?kinds=trade`, 'GET')).status).toBe(426);

    // The same address without compression, or asking without offering it (a plain connection),
    // and another address with it, are accepted.
    const plain = opened(await open(gw.url, '127.0.0.2', false));
    const unoffered = opened(await open(gw.url, '127.0.0.2', true, false));
    expect(unoffered.ws.extensions).toBe('');
    const other = opened(await open(gw.url, '127.0.0.3', true));
    expect(other.ws.extensions).toContain('permessage-deflate');

    // A deflate connection that closes frees its place.
    held[0]!.ws.close();
    await held[0]!.closed;
    const again = await eventually(async () => {
      const o = await open(gw.url, '127.0.0.2', true);
      return 'ws' in o ? o : null;
    }, 'a deflate connection of 127.0.0.2 accepted again');
    expect(again.ws.extensions).toContain('permessage-deflate');
    for (const c of [held[1]!, plain, unoffered, other, again]) c.ws.close();
  });
});
