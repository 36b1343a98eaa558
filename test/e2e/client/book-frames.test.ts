// The client's order books through the real gateway and the reference engine: after a forced
// reconnect the resumed connection replays the polled books of its history, and the client
// delivers none at or below the book seq it already delivered for that market; a delta
// subscription kept by DeltaOrderBook (chain + CRC-32 of the crc-32 package) equals the engine book.
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { request } from 'undici';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { fundedClient, SigningClient } from '../../sandbox/engine/helpers.js';
import { DeltaOrderBook, GatewayClient, StreamClient, type StreamMessage, type WebSocketCtor } from '../../../packages/client/src/index.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';

describe('client order books (gateway + reference engine)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let maker: SigningClient;
  let price = 60000;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine, { WS_ORDERBOOK_POLL_MS: '50' });
    maker = await fundedClient(engine.url, engine.adminToken, '1000000', 'maker');
  });

  /** One more resting order: a new book (new seq) at the next poll. */
  const quote = async (): Promise<void> => {
    price += 5;
    expect((await maker.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: String(price) })).body).toMatchObject({ ok: true });
  };

  it('never re-delivers an older book after a forced reconnect', { timeout: 30_000 }, async () => {
    const messages: StreamMessage[] = [];
    const raw: number[] = [];
    // Records the book seqs the socket itself carries, to show the replay did send older books.
    const Recording = function (this: unknown, url: string) {
      const ws = new WebSocket(url);
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { kind: string; seq: number };
        if (m.kind === 'orderbook.snapshot') raw.push(m.seq);
      });
      return ws;
    } as unknown as WebSocketCtor;
    const stream = new StreamClient({
      client: new GatewayClient({ baseUrl: gw.url }),
      kinds: ['orderbook.snapshot'],
      markets: ['BTC-PERP'],
      heartbeatS: 0, // the resume point then stays where it was: the replay holds every book since
      WebSocket: Recording,
      reconnect: { baseDelayMs: 10, maxDelayMs: 20 },
      onMessage: (m) => messages.push(m),
    });
    const books = () => messages.flatMap((m) => (m.source === 'live' && m.frame.kind === 'orderbook.snapshot' ? [m.frame.seq] : []));
    stream.start();
    for (let i = 0; i < 8; i++) {
      await quote();
      const n = books().length;
      await waitFor(() => books().length > n, 5_000, 'a new book');
    }
    const before = raw.length;
    const lastBook = books().at(-1)!;
    stream.reconnectNow();
    await quote();
    await waitFor(() => books().at(-1)! > lastBook, 5_000, 'the current book after the reconnect');
    stream.stop();
    // The resumed connection did carry older books (the gateway's replay)...
    expect(raw.slice(before).some((seq) => seq <= lastBook)).toBe(true);
    // ...and the client delivered none of them: book seqs only go up.
    const seqs = books();
    expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
  });

  it('warns at run time when the markets filter names no market (the gateway then streams every market)', { timeout: 15_000 }, async () => {
    const warnings: string[] = [];
    const stream = new StreamClient({
      client: new GatewayClient({ baseUrl: gw.url }),
      kinds: ['trade'],
      // The types warn first: a lower-case literal is no market symbol (MarketFilter). Past them
      // (a symbol read at run time), the run-time warning below.
      // @ts-expect-error -- '"btc-perp"' is not assignable to '"BTC-PERP" | "ETH-PERP" | "SOL-PERP"'
      markets: ['btc-perp'],
      onWarning: (m) => warnings.push(m),
      onMessage: () => {},
    });
    stream.start();
    await waitFor(() => warnings.length > 0, 5_000, 'the warning');
    stream.stop();
    expect(warnings[0]).toContain('markets=btc-perp names no market');
    // A filter naming a listed market is not warned about.
    const quiet: string[] = [];
    let subscribed = false;
    const okWithControl = new StreamClient({
      client: new GatewayClient({ baseUrl: gw.url }),
      kinds: ['trade'],
      markets: ['BTC-PERP'],
      onWarning: (m) => quiet.push(m),
      onMessage: (m) => {
        if (m.source === 'control' && m.message.kind === 'stream.subscribed') subscribed = true;
      },
    });
    okWithControl.start();
    await waitFor(() => subscribed, 5_000, 'subscribed');
    okWithControl.stop();
    expect(quiet).toEqual([]);
  });

  it('DeltaOrderBook keeps a delta subscription equal to the engine book', { timeout: 30_000 }, async () => {
    const book = new DeltaOrderBook('BTC-PERP');
    const results: string[] = [];
    const stream = new StreamClient({
      client: new GatewayClient({ baseUrl: gw.url }),
      kinds: ['orderbook.delta'],
      markets: ['BTC-PERP'],
      book: { depth: 100 },
      onMessage: (m) => {
        if (m.source === 'live') results.push(book.apply(m.frame));
      },
    });
    stream.start();
    await waitFor(() => book.bookSeq !== null, 5_000, 'the snapshot');
    const taker = await fundedClient(engine.url, engine.adminToken, '1000000', 'taker');
    for (let i = 0; i < 5; i++) await quote();
    expect((await taker.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.025' })).body).toMatchObject({ ok: true });
    const engineBook = (await (await request(`${engine.url}/v1/orderbook?depth=100&market=BTC-PERP`)).body.json()) as { seq: number; asks: Array<[string, string]> };
    await waitFor(() => book.bookSeq === engineBook.seq, 5_000, 'the engine book seq');
    stream.stop();
    expect(results.filter((r) => r === 'resync')).toEqual([]);
    expect(results.filter((r) => r === 'applied').length).toBeGreaterThan(5);
    expect(book.asks.map((l) => [l[0], l[1]])).toEqual(engineBook.asks);
  });
});
