// OrderBookFeed through the real gateway and the reference engine: a book frame whose checksum
// does not match, or a lost delta, makes the feed throw its book away and subscribe again (a new
// connection, snapshot first), after which the book equals the engine's again; another view
// (grouping) is another subscription. The socket is real; the test only alters or drops one
// incoming message on its way to the client, as a faulty network or gateway would.
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { fundedClient, SigningClient } from '../../sandbox/engine/helpers.js';
import { GatewayClient, OrderBookFeed, type WebSocketCtor } from '../../../packages/client/src/index.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { tappedSocket } from '../../support/tapped-socket.js';

type Fault = (frame: { kind: string; payload: { checksum?: number } }) => 'pass' | 'drop' | 'corrupt';

/** A real `ws` socket whose incoming messages pass through `fault` first (one fault per test). */
function faultySocket(fault: Fault, opened: string[]): WebSocketCtor {
  return tappedSocket({
    opened,
    received: (text) => {
      const frame = JSON.parse(text) as { kind: string; payload: { checksum?: number } };
      const verdict = fault(frame);
      if (verdict === 'drop') return null;
      if (verdict === 'corrupt') frame.payload.checksum = ((frame.payload.checksum ?? 0) + 1) >>> 0;
      return JSON.stringify(frame);
    },
  });
}

describe('OrderBookFeed (gateway + reference engine)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let maker: SigningClient;
  let price = 61000;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine);
    maker = await fundedClient(engine.url, engine.adminToken, '1000000', 'maker');
    await quote();
  });

  async function quote(): Promise<void> {
    price += 10;
    expect((await maker.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: String(price) })).body).toMatchObject({ ok: true });
  }
  const engineBook = async () => (await (await request(`${engine.url}/v1/orderbook?depth=50&market=BTC-PERP`)).body.json()) as { seq: number; asks: Array<[string, string]> };

  for (const [name, fault] of [
    ['a checksum that does not match', 'corrupt'],
    ['a lost delta', 'drop'],
  ] as const) {
    it(`subscribes again after ${name}, and ends equal to the engine book`, { timeout: 30_000 }, async () => {
      let deltas = 0;
      const opened: string[] = [];
      const reasons: string[] = [];
      // The second delta of the first connection is the faulty one.
      const Ws = faultySocket((f) => (f.kind === 'orderbook.delta' && opened.length === 1 && ++deltas === 2 ? fault : 'pass'), opened);
      let books = 0;
      const feed = new OrderBookFeed({ client: new GatewayClient({ baseUrl: gw.url }), market: 'BTC-PERP', view: { depth: 50 }, WebSocket: Ws, onBook: () => books++, onResync: (r) => reasons.push(r) });
      feed.start();
      await waitFor(() => feed.book.bookSeq !== null, 5_000, 'the snapshot');
      for (let i = 0; i < 4; i++) await quote();
      const target = await engineBook();
      await waitFor(() => feed.book.bookSeq === target.seq, 5_000, 'the engine book seq');
      feed.stop();
      expect(reasons).toEqual([fault === 'corrupt' ? 'checksum' : 'gap']);
      expect(feed.resyncs).toBe(1);
      // A new connection, without a resume point (its snapshot comes first).
      expect(opened).toHaveLength(2);
      expect(opened[1]).not.toContain('since=');
      expect(feed.book.asks.map((l) => [l[0], l[1]])).toEqual(target.asks);
      expect(books).toBeGreaterThan(2);
    });
  }

  it('another view is another subscription: grouped levels with their order counts', { timeout: 20_000 }, async () => {
    const opened: string[] = [];
    const feed = new OrderBookFeed({ client: new GatewayClient({ baseUrl: gw.url }), market: 'BTC-PERP', WebSocket: faultySocket(() => 'pass', opened), onBook: () => {} });
    feed.start();
    await waitFor(() => feed.book.bookSeq !== null, 5_000, 'the snapshot');
    const levels = feed.book.asks.length;
    expect(levels).toBeGreaterThan(3);
    feed.setView({ group: 'tick:1000' });
    await waitFor(() => feed.book.bookSeq !== null && feed.book.asks.length < levels, 5_000, 'the grouped snapshot');
    feed.stop();
    expect(opened[1]).toContain('group=tick%3A1000');
    // Every ask lies in (61000, 62000]: one level holding every order.
    expect(feed.book.asks.map((l) => [l[0], l[2]])).toEqual([['62000.0000000000', levels]]);
    expect(feed.resyncs).toBe(0);
  });
});
