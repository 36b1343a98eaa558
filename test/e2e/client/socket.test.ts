// The client package talking to the socket (docs/client.md "Changing a live stream", "Orders over
// the socket"), through the real gateway and the reference engine: stream.subscribe /
// unsubscribe resolve with the filters as applied and the new frames arrive (also after a
// reconnect, whose URL carries the changed filters); a refusal rejects with the gateway's code;
// stream.placeOrder / cancelOrder are signed as the REST calls and resolve with the engine's answer.
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { faucet, fundedClient, SigningClient } from '../../sandbox/engine/helpers.js';
import { request } from 'undici';
import { DeltaOrderBook, GatewayClient, GatewayError, localParty, StreamClient, type StreamMessage, type WebSocketCtor } from '../../../packages/client/src/index.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';

describe('client: talking to the socket (gateway + reference engine)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let maker: SigningClient;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine, {}, { markets: true });
    maker = await fundedClient(engine.url, engine.adminToken, '1000000', 'maker');
  });

  it('subscribe and unsubscribe change the live stream, and a reconnect keeps the change', { timeout: 30_000 }, async () => {
    const messages: StreamMessage[] = [];
    const stream = new StreamClient({
      client: new GatewayClient({ baseUrl: gw.url }),
      kinds: ['trade'],
      markets: ['ETH-PERP'],
      WebSocket: WebSocket as unknown as WebSocketCtor,
      reconnect: { baseDelayMs: 10 },
      onMessage: (m) => messages.push(m),
    });
    stream.start();
    const applied = await stream.subscribe({ markets: ['BTC-PERP'], kinds: ['orderbook.delta'], book: { depth: 3 } });
    expect(applied).toMatchObject({ kinds: ['trade', 'orderbook.delta', 'orderbook.snapshot'], markets: ['ETH-PERP', 'BTC-PERP'], book: { depth: 3, group: 'none' } });
    const trades = () => messages.filter((m) => m.source === 'live' && m.frame.kind === 'trade' && m.frame.market === 'BTC-PERP').length;
    const cross = async () => {
      expect((await maker.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '60000' })).body).toMatchObject({ ok: true });
      expect((await maker.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01' })).body).toMatchObject({ ok: true });
    };
    await cross();
    await waitFor(() => trades() >= 1, 5_000, 'a BTC-PERP trade');
    // A reconnect asks for the filters as they now stand: BTC-PERP still comes.
    stream.reconnectNow();
    await waitFor(() => messages.filter((m) => m.source === 'control' && m.message.kind === 'stream.subscribed').length >= 2, 5_000, 'reconnected');
    const subscribed = messages.filter((m) => m.source === 'control' && m.message.kind === 'stream.subscribed').at(-1)!;
    expect(subscribed.source === 'control' && subscribed.message.kind === 'stream.subscribed' && subscribed.message.payload.markets).toEqual(['ETH-PERP', 'BTC-PERP']);
    const before = trades();
    await cross();
    await waitFor(() => trades() > before, 5_000, 'a BTC-PERP trade after the reconnect');

    const after = await stream.unsubscribe({ markets: ['BTC-PERP'] });
    expect(after.markets).toEqual(['ETH-PERP']);
    // A refusal: the gateway's code on a GatewayError.
    const refused = await stream.subscribe({ markets: ['DOGE-PERP'] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).code).toBe('unknown_market');
    stream.stop();
  });

  it('a book view subscribed by message is kept equal to the engine book by DeltaOrderBook', { timeout: 30_000 }, async () => {
    const book = new DeltaOrderBook('BTC-PERP');
    const results: string[] = [];
    const stream = new StreamClient({
      client: new GatewayClient({ baseUrl: gw.url }),
      kinds: ['trade'],
      markets: ['BTC-PERP'],
      WebSocket: WebSocket as unknown as WebSocketCtor,
      onMessage: (m) => {
        if (m.source === 'live' && (m.frame.kind === 'orderbook.snapshot' || m.frame.kind === 'orderbook.delta')) results.push(book.apply(m.frame));
      },
    });
    stream.start();
    await stream.subscribe({ kinds: ['orderbook.delta'], book: { depth: 100 } });
    await waitFor(() => book.bookSeq !== null, 5_000, 'the view snapshot');
    for (let i = 0; i < 4; i++) {
      expect((await maker.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: String(70000 + i * 10) })).body).toMatchObject({ ok: true });
    }
    const engineBook = (await (await request(`${engine.url}/v1/orderbook?depth=100&market=BTC-PERP`)).body.json()) as { seq: number; asks: Array<[string, string]> };
    await waitFor(() => book.bookSeq === engineBook.seq, 5_000, 'the engine book seq');
    stream.stop();
    expect(results.filter((r) => r === 'resync')).toEqual([]);
    expect(book.asks.map((l) => [l[0], l[1]])).toEqual(engineBook.asks);
  });

  it('places and cancels orders over the socket, signed as over REST', { timeout: 30_000 }, async () => {
    const client = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
    const signer = await localParty('sock');
    expect((await client.createSession(signer)).ok).toBe(true);
    await faucet(engine.url, engine.adminToken, signer.party, '1000000');
    const stream = new StreamClient({ client, kinds: ['order.update'], party: [signer.party], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => {} });
    stream.start(); // the order waits for the socket to open
    const placed = await stream.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '40000' });
    expect(placed).toMatchObject({ ok: true, status: 'open' });
    const orderId = (placed as { orderId: string }).orderId;
    const cancelled = await stream.cancelOrder(orderId);
    expect(cancelled).toMatchObject({ ok: true });
    // The engine's business refusal is a value, as over REST.
    const rejected = await stream.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.00001', price: '40000' });
    expect(rejected).toMatchObject({ ok: false, code: 'invalid_size' });
    // A market order finding nothing: the reason it ended at once.
    const ioc = await stream.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'market', size: '1' });
    expect(ioc).toMatchObject({ ok: true, status: 'cancelled', reason: 'ioc' });
    // Cancelling again: the engine's refusal comes back as REST's would (an ok:false value or a GatewayError).
    const twice = await stream.cancelOrder(orderId).catch((e: unknown) => e);
    const rest = await client.cancelOrder(orderId).catch((e: unknown) => e);
    if (twice instanceof GatewayError) expect([twice.status, twice.code]).toEqual([(rest as GatewayError).status, (rest as GatewayError).code]);
    else expect(twice).toEqual(rest);
    stream.stop();
  });

  it('without a session an order is refused with the REST code', { timeout: 30_000 }, async () => {
    const stream = new StreamClient({ client: new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } }), kinds: ['trade'], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => {} });
    stream.start();
    const refused = await stream.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '40000' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect([(refused as GatewayError).status, (refused as GatewayError).code]).toEqual([401, 'unauthorized']);
    stream.stop();
  });
});
