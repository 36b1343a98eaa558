// The whole signed path against the reference engine: client signature → gateway → engine
// verification → engine answer back through the gateway, over loopback HTTP.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { http, makeParty, SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';

describe('trading proxy against the reference engine', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: SigningClient;
  let bob: SigningClient;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file, { rejectCodeStyle: 'hex' });
    gw = await testGateway(
      file,
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, FAUCET_ENABLED: 'true', FAUCET_AMOUNT: '1000', RATE_LIMIT_MAX: '100000' },
      { listen: true, overrides: { live: null } },
    );
    alice = new SigningClient(gw.url, makeParty('alice'));
    bob = new SigningClient(gw.url, makeParty('bob'));
    expect((await alice.authorize()).body).toMatchObject({ ok: true });
    expect((await bob.authorize()).body).toMatchObject({ ok: true });
  });

  it('creates sessions through the gateway and the guard knows them at once (faucet)', async () => {
    const path = `/v1/users/${alice.id}/faucet`;
    const first = await alice.signed('POST', path);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ party: alice.id, amount: '1000.0000000000', newBalance: '1000.0000000000' });
    const second = await alice.signed('POST', path);
    expect(second.status).toBe(429);
    expect(second.body.code).toBe('rate_limited');
    expect(Number(second.headers['retry-after'])).toBe(second.body.retryAfterS);
    const cross = await bob.signed('POST', path);
    expect(cross.status).toBe(403);
    expect((await bob.signed('POST', `/v1/users/${bob.id}/faucet`)).status).toBe(200);
  });

  it('places, reads in the book, and cancels an order', async () => {
    const placed = await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '60000' });
    expect(placed.status).toBe(200);
    expect(placed.body).toMatchObject({ ok: true, status: 'open', filledSize: '0.0000000000', avgPrice: null });
    const book = await http(gw.url, 'GET', '/v1/orderbook?market=BTC-PERP&depth=5');
    expect(book.status).toBe(200);
    expect(book.body).toMatchObject({ market: 'BTC-PERP', depth: 5, bids: [['60000.0000000000', '0.0100000000']], asks: [] });
    const direct = await http(engine.url, 'GET', '/v1/orderbook?depth=5&market=BTC-PERP');
    expect(book.text).toBe(direct.text);
    const cancelled = await alice.cancel(placed.body.orderId);
    expect(cancelled.body).toEqual({ ok: true, orderId: placed.body.orderId, status: 'cancelled' });
    const again = await alice.cancel(placed.body.orderId);
    expect(again.status).toBe(200);
    expect(again.body.ok).toBe(false);
    expect(typeof again.body.code).toBe('string');
  });

  it('passes the engine rejections (HTTP 200 ok:false) through, 0x0C included', async () => {
    const size = await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.00001', price: '60000' });
    expect(size.status).toBe(200);
    expect(size.body).toMatchObject({ ok: false, code: 'invalid_size' });
    const notional = await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.0001', price: '60000' });
    expect(notional.body).toMatchObject({ ok: false, code: '0x0C' });
    const tpsl = await alice.tpsl({ market: 'ETH-PERP', tp: { triggerPrice: '5000' } });
    expect(tpsl.body).toMatchObject({ ok: false, code: 'no_position' });
  });

  it('forwards the signed GET body of /v1/user/me', async () => {
    const me = await alice.me();
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ ok: true, party: alice.id, balance: '1000.0000000000', openOrders: [] });
  });

  it('refuses a replayed signature itself and passes the engine 401 for a tampered one through', async () => {
    const body = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '50000' });
    const headers = alice.signHeaders('POST', '/v1/orders', body);
    const first = await http(gw.url, 'POST', '/v1/orders', { body, headers });
    expect(first.body.ok).toBe(true);
    const replay = await http(gw.url, 'POST', '/v1/orders', { body, headers });
    // A spent signature is the gateway's to refuse (docs/trading.md "Spent signatures"): its own error shape.
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ code: 'unauthorized' });
    expect(typeof replay.body.error).toBe('string');
    const tampered = await http(gw.url, 'POST', '/v1/orders', { body: body.replace('50000', '50001'), headers: alice.signHeaders('POST', '/v1/orders', body) });
    expect(tampered.status).toBe(401);
    const wrongParty = await alice.signed('POST', '/v1/orders', JSON.parse(body), { user: bob.id });
    expect(wrongParty.status).toBe(401);
  });

  it('refuses a duplicated X-User itself instead of letting the engine answer its HTML 502', async () => {
    const body = '{}';
    const h = alice.signHeaders('POST', '/v1/orders', body);
    const raw = Object.entries(h).flat().concat(['x-user', alice.id]);
    const res = await http(gw.url, 'POST', '/v1/orders', { body, headers: raw });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('bad_request');
    // Straight to the engine the same request gets the HTML page the spec warns about.
    const direct = await http(engine.url, 'POST', '/v1/orders', { body, headers: raw });
    expect(direct.status).toBe(502);
    expect(direct.text).toContain('<html>');
  });
});
