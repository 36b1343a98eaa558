// The client pieces a trading screen is built from, on the whole stack (reference engine →
// reference indexer → PostgreSQL → gateway, the trading stack of the console's tests): one trade
// shape live and in REST; one connection carrying a book, market data and a party's channels.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GatewayClient, LiveConnection, OrderBookFeed, StreamClient, toTrade, type DeltaOrderBook, type Frame, type Trade, type WebSocketCtor } from '../../../packages/client/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { eventually } from '../../support/eventually.js';
import { SEED_MARKET, startTradingStack, type TradingStack } from '../../support/trading-stack.js';

async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const found = await eventually(async () => {
    const value = await read();
    return value === undefined ? undefined : { value };
  }, { timeoutMs: ms, everyMs: 25, what });
  return found.value;
}

describe('a trading screen on the client (whole stack)', () => {
  let db: TestDatabase;
  let stack: TradingStack;
  let client: GatewayClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startTradingStack(db.url);
    client = new GatewayClient({ baseUrl: stack.gateway.url, retry: { retries: 0 } });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await db?.drop();
  });

  it('a trade has one shape: toTrade(live frame) equals the REST record of the same match', async () => {
    const live: Trade[] = [];
    const stream = new StreamClient({
      client,
      kinds: ['trade'],
      markets: [SEED_MARKET],
      onMessage: (m) => {
        if (m.source === 'live' && m.frame.kind === 'trade') live.push(toTrade(m.frame));
      },
    });
    stream.start();
    try {
      const first = await until(() => live[0], 'the snapshot trade');
      const rest = (await client.listTrades({ market: SEED_MARKET, limit: 10 })).items;
      expect(rest.find((t) => t.seq === first.seq)).toEqual(first);
      expect(Object.keys(first).sort()).toEqual(['createdAt', 'market', 'matchId', 'price', 'seq', 'side', 'size']);
    } finally {
      stream.stop();
    }
  });

  it('one connection carries a book (view changes, refresh), trades and a party, each watch getting only its frames', { timeout: 30_000 }, async () => {
    let sockets = 0;
    const Counting = function (this: unknown, url: string) {
      sockets++;
      return new WebSocket(url);
    } as unknown as WebSocketCtor;
    const { client: maker, signer } = stack.maker;
    const live = new LiveConnection({ client: maker, WebSocket: Counting });
    let book: DeltaOrderBook | null = null;
    let snapshots = 0;
    const feed = new OrderBookFeed({ client: maker, market: SEED_MARKET, connection: live, view: { depth: 5 }, onBook: (b) => (book = b) });
    const bookFrames: Frame[] = [];
    const tradeFrames: Frame[] = [];
    const partyFrames: Frame[] = [];
    const spy = live.watch({ kinds: ['orderbook.delta'], markets: [SEED_MARKET] }, { onMessage: (m) => m.source === 'live' && (bookFrames.push(m.frame), m.frame.kind === 'orderbook.snapshot' && snapshots++) });
    feed.start();
    const trades = live.watch({ kinds: ['trade'], markets: [SEED_MARKET] }, { onMessage: (m) => m.source === 'live' && tradeFrames.push(m.frame) });
    const party = live.watch({ kinds: ['order.update', 'account.update'], party: [signer.party] }, { onMessage: (m) => m.source === 'live' && partyFrames.push(m.frame) });
    try {
      await until(() => (book && book.bids.length > 0 && book.asks.length > 0 ? book : undefined), 'the book');
      await until(() => tradeFrames[0], 'a trade');
      await until(() => partyFrames.find((f) => f.kind === 'order.update'), "the maker's open orders");
      await until(() => partyFrames.find((f) => f.kind === 'account.update'), "the maker's account");
      expect(new Set(tradeFrames.map((f) => f.kind))).toEqual(new Set(['trade']));
      expect(new Set(bookFrames.map((f) => f.kind)).has('trade')).toBe(false);
      expect(partyFrames.every((f) => f.kind === 'order.update' || f.kind === 'account.update')).toBe(true);

      // Another view: the same socket, a snapshot of the new view.
      feed.setView({ depth: 1 });
      await until(() => (book && book.bids.length === 1 && book.asks.length === 1 ? true : undefined), 'the depth-1 book');
      // A refresh (what a resync does): the book kinds dropped and asked again, a new snapshot.
      const before = snapshots;
      await live.refreshBooks();
      await until(() => (snapshots > before ? true : undefined), 'a fresh snapshot');
      expect(book!.bids).toHaveLength(1);

      // A closed watch's frames stop; what no watch needs leaves the connection's filters. The book
      // view's snapshots stay with its deltas (ADR 0191: this once read kinds ['orderbook.delta'],
      // a connection that would never have received its book's next snapshot).
      trades.close();
      party.close();
      await live.settled();
      expect(live.filters).toEqual({ kinds: ['orderbook.delta', 'orderbook.snapshot'], markets: [SEED_MARKET], intervals: null, party: [], book: '1|none' });
      expect(sockets).toBe(1);
      expect(live.sockets).toBe(1);
    } finally {
      spy.close();
      feed.stop();
      live.stop();
    }
  });
});
