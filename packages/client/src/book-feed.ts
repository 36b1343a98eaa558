// One market's live order book from a delta subscription, kept in sync without the caller's help
// (docs/client.md "Order books"): a StreamClient asking for `orderbook.delta` with the view's depth
// and grouping, a DeltaOrderBook applying its frames, and a fresh subscription whenever the
// keeper answers 'resync' (a delta that does not continue the chain, or a checksum that differs).
//
// The fresh subscription is a new connection without a resume point, not a reconnect of the same
// one: a resumed connection would first replay the deltas sent while it was away, which the reset
// keeper cannot apply (it holds no book until the next snapshot), and each would ask for yet
// another resync. A new connection sends the view's snapshot before any live frame.
//
// With `connection` (a LiveConnection) the feed is a watch on that one socket instead: another view
// is another watch (the subscribe carries the view and brings its snapshot), and a resync drops and
// asks again for the book kinds on the same socket (LiveConnection.refreshBooks). Until the first
// snapshot of a (re)subscription the keeper holds no book, and deltas still in flight from before
// are ignored rather than taken for a broken chain.
import { DeltaOrderBook } from './order-book.js';
import { StreamClient, type StreamOptions, type StreamState } from './stream.js';
import type { LiveConnection, Watch } from './connection.js';
import type { GatewayClient } from './client.js';
import type { GatewayError } from './errors.js';

export interface BookView {
  /** Levels per side, 1..1000 (the gateway's default 20). */
  depth?: number;
  /** `none`, `sig:2`…`sig:5` (significant figures) or `tick:<decimal>` (price multiples). */
  group?: string;
}

export interface OrderBookFeedOptions {
  client: GatewayClient;
  market: string;
  view?: BookView;
  /** Called after every applied frame with the keeper (levels `[price, size, orderCount]`, best first). */
  onBook: (book: DeltaOrderBook) => void;
  onState?: (state: StreamState) => void;
  onError?: (error: unknown) => void;
  onRefused?: (error: GatewayError) => void;
  /** Called each time the feed threw its book away and subscribed again (the reason: 'gap' or 'checksum'). */
  onResync?: (reason: 'gap' | 'checksum') => void;
  WebSocket?: StreamOptions['WebSocket'];
  heartbeatS?: number;
  /** The one connection of the screen to ride (docs/client.md "One connection"); without it the feed opens its own socket. */
  connection?: LiveConnection;
}

export class OrderBookFeed {
  private stream: StreamClient | null = null;
  private watch: Watch | null = null;
  /** On a shared connection: no snapshot applied yet since the last (re)subscription. */
  private awaitingSnapshot = false;
  private keeper: DeltaOrderBook;
  private currentView: BookView;
  /** How many times the book was thrown away and subscribed again. */
  resyncs = 0;

  constructor(private readonly options: OrderBookFeedOptions) {
    this.keeper = new DeltaOrderBook(options.market);
    this.currentView = { ...options.view };
  }

  get book(): DeltaOrderBook {
    return this.keeper;
  }
  get view(): BookView {
    return { ...this.currentView };
  }

  start(): void {
    if (this.stream || this.watch) return;
    this.subscribe();
  }

  stop(): void {
    this.stream?.stop();
    this.stream = null;
    this.watch?.close();
    this.watch = null;
  }

  /** Another depth or grouping: the view is another subscription, so the book starts again from its snapshot. */
  setView(view: BookView): void {
    this.currentView = { ...view };
    if (!this.stream && !this.watch) return;
    this.stop();
    this.subscribe();
  }

  private subscribe(): void {
    const { client, market, onState, onError, onRefused, WebSocket, heartbeatS, connection } = this.options;
    this.keeper = new DeltaOrderBook(market);
    if (connection) return this.watchOn(connection);
    const keeper = this.keeper;
    const stream: StreamClient = new StreamClient({
      client,
      kinds: ['orderbook.delta'],
      markets: [market],
      book: this.currentView,
      ...(heartbeatS !== undefined ? { heartbeatS } : {}),
      ...(WebSocket ? { WebSocket } : {}),
      ...(onState ? { onState } : {}),
      ...(onError ? { onError } : {}),
      ...(onRefused ? { onRefused } : {}),
      onMessage: (m) => {
        if (this.stream !== stream || m.source !== 'live') return;
        const before = keeper.bookSeq;
        const isDelta = m.frame.kind === 'orderbook.delta';
        const result = keeper.apply(m.frame);
        if (result === 'applied') this.options.onBook(keeper);
        else if (result === 'resync') this.resync(isDelta && before !== (m.frame.payload as { prevBookSeq?: number }).prevBookSeq ? 'gap' : 'checksum');
      },
    });
    this.stream = stream;
    stream.start();
  }

  private watchOn(connection: LiveConnection): void {
    const keeper = this.keeper;
    this.awaitingSnapshot = true;
    const watch: Watch = connection.watch(
      { kinds: ['orderbook.delta'], markets: [this.options.market], book: this.currentView },
      {
        onMessage: (m) => {
          if (this.watch !== watch || m.source !== 'live') return;
          const frame = m.frame;
          if (frame.kind !== 'orderbook.delta' && frame.kind !== 'orderbook.snapshot') return;
          if (this.awaitingSnapshot && frame.kind !== 'orderbook.snapshot') return;
          const before = keeper.bookSeq;
          const result = keeper.apply(frame);
          if (result === 'applied') {
            if (frame.kind === 'orderbook.snapshot') this.awaitingSnapshot = false;
            this.options.onBook(keeper);
          } else if (result === 'resync' && !this.awaitingSnapshot) {
            this.resyncs++;
            this.options.onResync?.(frame.kind === 'orderbook.delta' && before !== (frame.payload as { prevBookSeq?: number }).prevBookSeq ? 'gap' : 'checksum');
            this.awaitingSnapshot = true;
            void connection.refreshBooks();
          }
        },
        ...(this.options.onError ? { onError: this.options.onError } : {}),
        onReset: () => {
          this.awaitingSnapshot = true;
        },
      },
    );
    this.watch = watch;
  }

  private resync(reason: 'gap' | 'checksum'): void {
    this.resyncs++;
    this.options.onResync?.(reason);
    this.stop();
    this.subscribe();
  }
}
