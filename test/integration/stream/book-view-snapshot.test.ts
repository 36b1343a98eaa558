// A book view's orderbook.snapshot stays with its orderbook.delta (ADR 0191, issue 32): the React
// example's book stayed empty in about one load of four because its LiveConnection, after any
// subscribe, unsubscribed the orderbook.snapshot kind the gateway had added to its deltas, and the
// gateway let it go; a book seeded after that sent its snapshot to nobody, and the feed ignored
// every delta while it waited for one. Here the scripted engine holds the gateway's read of the
// book (the seed from the engine's levels: no database), so the changes happen mid-seed every time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, LiveConnection, OrderBookFeed, type DeltaOrderBook, type WebSocketCtor } from '../../../packages/client/src/index.js';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { tappedSocket } from '../../support/tapped-socket.js';
import { connect, startStack, type Stack } from './helpers.js';

/** A real `ws` socket that records the messages the client sends (op and kinds). */
function recordingSocket(sent: Array<{ op: string; kinds?: string[] }>): WebSocketCtor {
  return tappedSocket({
    sent: (text) => {
      const m = JSON.parse(text) as { op: string; kinds?: string[] };
      sent.push({ op: m.op, ...(m.kinds ? { kinds: m.kinds } : {}) });
    },
  });
}

describe('a book view keeps its snapshots while it is seeded', () => {
  let s: Stack;
  let release: () => void = () => {};

  beforeAll(async () => {
    const engine = await startScriptedEngine();
    engine.markets = [
      { symbol: 'BTC-PERP', status: 'active' },
      { symbol: 'ETH-PERP', status: 'active' },
    ];
    s = await startStack({}, { engine });
    await waitFor(() => (s.live.knownMarkets()?.size ?? 0) === 2, 5_000, 'the market list');
  });
  afterAll(async () => {
    release();
    await s?.close();
  });

  /** Holds the engine's book answers until the returned function is called. */
  function holdBooks(): void {
    s.engine.booksHeld = new Promise<void>((r) => (release = r));
  }

  it('an unsubscribe of orderbook.snapshot alone keeps it while orderbook.delta stays, and the book seeded after it arrives', async () => {
    holdBooks();
    s.engine.books.set('BTC-PERP', { seq: 7, bids: [['59900', '0.5']], asks: [['60100', '0.5'], ['60200', '0.5']] });
    const c = await connect(s.gw.url, 'kinds=orderbook.delta&markets=BTC-PERP&depth=5&control=true');
    await waitFor(() => s.engine.bookRequests.includes('BTC-PERP 100'), 5_000, "the seed's read of the engine book");
    c.ws.send(JSON.stringify({ op: 'unsubscribe', id: 'u1', kinds: ['orderbook.snapshot'] }));
    await c.waitFor((ms) => ms.some((m) => (m as { id?: unknown }).id === 'u1'));
    const ack = c.messages.find((m) => (m as { id?: unknown }).id === 'u1')!;
    expect(ack.kind).toBe('stream.ack');
    expect(ack.payload).toMatchObject({ kinds: ['orderbook.delta', 'orderbook.snapshot'], book: { depth: 5, group: 'none' } });
    expect(c.frames()).toEqual([]); // the book is not seeded yet: nothing of it was sent
    release();
    await c.waitFor((ms) => ms.some((m) => m.kind === 'orderbook.snapshot'));
    const snapshot = c.frames().find((m) => m.kind === 'orderbook.snapshot')!;
    expect(snapshot.market).toBe('BTC-PERP');
    expect(snapshot.payload).toMatchObject({ bookSeq: 7, depth: 5 });
    expect((snapshot.payload as { asks: unknown[] }).asks).toHaveLength(2);
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('LiveConnection: a book watch removed and added again, and another watch, while the book is seeded, never drop its snapshot; the seeded book arrives', async () => {
    holdBooks();
    s.engine.books.set('ETH-PERP', { seq: 9, bids: [['2990', '1'], ['2980', '2']], asks: [['3010', '1']] });
    const client = new GatewayClient({ baseUrl: s.gw.url, retry: { retries: 0 } });
    const sent: Array<{ op: string; kinds?: string[] }> = [];
    const live = new LiveConnection({ client, WebSocket: recordingSocket(sent) });
    let book: DeltaOrderBook | null = null;
    const feed = new OrderBookFeed({ client, market: 'ETH-PERP', connection: live, view: { depth: 5 }, onBook: (b) => (book = b) });
    const watches: Array<{ close(): void }> = [];
    try {
      feed.start();
      await waitFor(() => s.engine.bookRequests.includes('ETH-PERP 100'), 5_000, "the seed's read of the engine book");
      // React StrictMode's remount (in a development build): the book watch closed and opened again at once.
      feed.stop();
      feed.start();
      await live.settled();
      // The React example's account panel: another watch, added later.
      const trades = live.watch({ kinds: ['trade'], markets: ['ETH-PERP'] }, { onMessage: () => {} });
      watches.push(trades);
      await trades.ready;
      await live.settled();
      // The remount asks the book again (both book kinds dropped, deltas asked with the view), the
      // trade watch adds its kind; nothing ever removes orderbook.snapshot alone.
      expect(sent).toEqual([
        { op: 'unsubscribe', kinds: ['orderbook.delta', 'orderbook.snapshot'] },
        { op: 'subscribe', kinds: ['orderbook.delta'] },
        { op: 'subscribe', kinds: ['trade'] },
      ]);
      expect(live.filters?.kinds).toEqual(['orderbook.delta', 'orderbook.snapshot', 'trade']);
      expect(book).toBeNull(); // still being seeded: the changes above all happened before its snapshot
      release();
      await waitFor(() => (book?.bids.length ?? 0) === 2, 10_000, 'the seeded book on the page');
      expect(book!.bookSeq).toBe(9);
      expect(book!.asks).toHaveLength(1);
    } finally {
      release();
      for (const w of watches) w.close();
      feed.stop();
      live.stop();
    }
  });

  it('LiveConnection: a book watch for a market the connection already follows, in a grouped view it already has, gets its snapshot (asked again), and the same view is not asked again at every change', async () => {
    s.engine.books.set('BTC-PERP', { seq: 11, bids: [['59900', '0.5']], asks: [['60100', '0.5']] });
    // ETH-PERP's book is the one the test before seeded (two bids).
    const client = new GatewayClient({ baseUrl: s.gw.url, retry: { retries: 0 } });
    const sent: Array<{ op: string; kinds?: string[] }> = [];
    const live = new LiveConnection({ client, WebSocket: recordingSocket(sent) });
    // A watch of both markets (the console's market table and party channels): the connection follows ETH-PERP already.
    const everywhere = live.watch({ kinds: ['trade'], markets: ['BTC-PERP', 'ETH-PERP'] }, { onMessage: () => {} });
    let btc: DeltaOrderBook | null = null;
    let eth: DeltaOrderBook | null = null;
    // The gateway acks a grouping in its own normal form (tick:1 → tick:1.0000000000).
    const view = { depth: 5, group: 'tick:1' };
    const btcFeed = new OrderBookFeed({ client, market: 'BTC-PERP', connection: live, view, onBook: (b) => (btc = b) });
    const ethFeed = new OrderBookFeed({ client, market: 'ETH-PERP', connection: live, view, onBook: (b) => (eth = b) });
    try {
      await everywhere.ready;
      btcFeed.start();
      await waitFor(() => (btc?.bids.length ?? 0) === 1, 10_000, 'the BTC-PERP book');
      await live.settled();
      // The screen switches market: the BTC-PERP book closes, the ETH-PERP one opens in the same view.
      const before = sent.length;
      btcFeed.stop();
      ethFeed.start();
      await waitFor(() => (eth?.bids.length ?? 0) === 2, 10_000, 'the ETH-PERP book (its snapshot asked again: the view and the market were followed already)');
      await live.settled();
      expect(sent.slice(before)).toEqual([
        { op: 'unsubscribe', kinds: ['orderbook.delta', 'orderbook.snapshot'] },
        { op: 'subscribe', kinds: ['orderbook.delta'] },
      ]);
      // Another change of the watches leaves the view alone (before: the ack's tick:1.0000000000 never
      // equalled the asked tick:1, so every change subscribed the same view again, for nothing).
      const after = sent.length;
      const candles = live.watch({ kinds: ['candle.update'], markets: ['ETH-PERP'], intervals: ['1m'] }, { onMessage: () => {} });
      await candles.ready;
      await live.settled();
      expect(sent.slice(after)).toEqual([{ op: 'subscribe', kinds: ['candle.update'] }]);
      candles.close();
    } finally {
      everywhere.close();
      btcFeed.stop();
      ethFeed.stop();
      live.stop();
    }
  });
});
