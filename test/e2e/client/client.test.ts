// @gateway/client end to end: WebCrypto session, signed trading calls, the faucet and the
// Node-only GET-body route, through the real gateway to the reference engine.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';
import { GatewayClient, GatewayError, getUserMe, localParty, type PartySigner } from '../../../packages/client/src/node.js';
import type { TestGateway } from '../../support/gateway.js';

describe('@gateway/client against the gateway and the reference engine', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let party: PartySigner;
  let client: GatewayClient;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testGateway(
      stacks,
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, FAUCET_ENABLED: 'true', RATE_LIMIT_MAX: '100000' },
      { listen: true, overrides: { live: null } },
    );
    party = await localParty('webcrypto');
    client = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
  });

  it('creates a session signed with WebCrypto Ed25519', async () => {
    const answer = await client.createSession(party, 10 * 60 * 1000);
    expect(answer.ok).toBe(true);
    expect(client.session?.party).toBe(party.party);
    expect(client.session?.sessionId).toBe(answer.ok ? answer.sessionId : '');
  });

  it('tops up through the faucet, and raises the cooldown as a 429 GatewayError', async () => {
    expect(await client.faucet(party.party)).toEqual({ party: party.party, amount: '1000.0000000000', newBalance: '1000.0000000000' });
    const err = (await client.faucet(party.party).catch((e: unknown) => e)) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.isRateLimited).toBe(true);
    expect(err.path).toBe(`/v1/users/${encodeURIComponent(party.party)}/faucet`);
    expect(err.body.retryAfterS).toBeGreaterThan(3590);
  });

  it('refuses another party\'s route with a 403 flagged isUnauthorized', async () => {
    const other = await localParty('other');
    const err = (await client.faucet(other.party).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(403);
    expect(err.isUnauthorized).toBe(true);
    expect(err.body).toEqual({ error: 'X-User must equal the :party of the path', code: 'forbidden' });
  });

  it('signs a read of a party it held before with that party\'s own session, after switching to another', async () => {
    // A screen that switches party while a read of the previous one is on its way (a verification's
    // pages): that read is the old party's, and must not go out with the new party's session (403).
    const before = await localParty('before-switch');
    const sessionBefore = (await client.createSession(before, 10 * 60 * 1000)).session!;
    const after = await localParty('after-switch');
    expect((await client.createSession(after, 10 * 60 * 1000)).ok).toBe(true);
    expect(client.session?.party).toBe(after.party);
    expect(await client.faucetStatus(before.party)).toMatchObject({ party: before.party });
    expect(await client.faucetStatus(after.party)).toMatchObject({ party: after.party });
    expect(client.session?.party).toBe(after.party);
    expect(sessionBefore.party).toBe(before.party);
    // Back to the first party, as the console's selector does.
    client.session = sessionBefore;
    expect(await client.faucetStatus(after.party)).toMatchObject({ party: after.party });
    client.session = (await client.createSession(party, 10 * 60 * 1000)).session!;
  });

  it('places, rejects (as a value), cancels, and sees the book', async () => {
    const placed = await client.placeOrder({ market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.1', price: '4000', clientOrderId: 'c-1' });
    if (!placed.ok) throw new Error(`rejected: ${placed.code}`);
    expect(placed.status).toBe('open');
    const book = await client.getOrderbook({ market: 'ETH-PERP', depth: 3 });
    if (!book.ok) throw new Error(book.code);
    expect(book.asks).toEqual([['4000.0000000000', '0.1000000000']]);
    // An engine refusal is a value here as in placeOrder: one way of reporting it across the client.
    expect(await client.getOrderbook({ market: 'NOPE-PERP' })).toMatchObject({ ok: false, code: 'market_unsupported' });
    const rejected = await client.placeOrder({ market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.0001', price: '4000' });
    expect(rejected).toMatchObject({ ok: false, code: 'invalid_size' });
    const me = await getUserMe(client);
    if (!me.ok) throw new Error(me.code);
    expect(me.balance).toBe('1000.0000000000');
    expect(me.openOrders.map((o) => o.orderId)).toEqual([placed.orderId]);
    expect(await client.cancelOrder(placed.orderId)).toEqual({ ok: true, orderId: placed.orderId, status: 'cancelled' });
  });

  it('raises a 400 GatewayError for a bad depth (not retried, not a server error)', async () => {
    const err = (await client.getOrderbook({ depth: 500 }).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(400);
    expect(err.isServer).toBe(false);
    expect(err.body).toEqual({ error: 'query parameter "depth" must be an integer from 1 to 100, got "500"', code: 'bad_request' });
  });

  it('retries a 502 from a stopped engine with backoff, then raises it flagged isServer', async (ctx) => {
    const sleeps: number[] = [];
    const flaky = new GatewayClient({
      baseUrl: gw.url,
      retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 100, random: () => 0, sleep: async (ms) => void sleeps.push(ms) },
    });
    const down = await testGateway(ctx, { ENGINE_BASE_URL: 'http://127.0.0.1:9' }, { listen: true, overrides: { live: null } });
    const c = new GatewayClient({ baseUrl: down.url, retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 100, random: () => 0, sleep: async (ms) => void sleeps.push(ms) } });
    const err = (await c.getOrderbook().catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(502);
    expect(err.isServer).toBe(true);
    expect(err.body.code).toBe('engine_unavailable');
    expect(sleeps).toEqual([5, 10]);
    expect(await flaky.getOrderbook({ depth: 1 })).toMatchObject({ ok: true, market: 'BTC-PERP', depth: 1 });
  });
});
