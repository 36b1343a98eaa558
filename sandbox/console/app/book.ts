// The order book panel: one market's book kept from `orderbook.delta` frames by the client's
// OrderBookFeed (snapshot, then deltas checked by chain and CRC-32; a fresh subscription on a gap
// or a mismatch), drawn with each level's order count. The grouping and depth selectors change the
// subscription's view (docs/stream.md "Order book deltas"); nothing here polls.
import { OrderBookFeed, subDecimal, type BookLevel, type DeltaOrderBook, type GatewayClient, type GatewayError, type LiveConnection } from '@gateway/client';
import { escapeHtml, px, sz } from './format.js';

/** Grouping choices: tick multiples and significant figures (the gateway's `group`). */
export const GROUPINGS: ReadonlyArray<{ value: string; label: string }> = [
  { value: 'none', label: 'none' },
  { value: 'tick:0.1', label: '0.1' },
  { value: 'tick:1', label: '1' },
  { value: 'tick:10', label: '10' },
  { value: 'tick:100', label: '100' },
  { value: 'tick:1000', label: '1000' },
  { value: 'sig:5', label: '5 sig. figs' },
  { value: 'sig:4', label: '4 sig. figs' },
  { value: 'sig:3', label: '3 sig. figs' },
  { value: 'sig:2', label: '2 sig. figs' },
];
export const DEPTHS = [5, 10, 20, 50] as const;

export interface BookPanelHooks {
  /** After each drawing that showed levels (first-paint timing). */
  onPainted(): void;
  onError(err: unknown): void;
  onRefused(err: GatewayError): void;
}

/** What the page exposes of the book for tests and the benchmark (`window.__console.book`). */
export interface BookProbe {
  market: string;
  group: string;
  depth: number;
  bookSeq: number | null;
  resyncs: number;
}

export class BookPanel {
  private feed: OrderBookFeed | null = null;
  private group = 'none';
  private depth = 10;
  readonly probe: BookProbe = { market: '', group: 'none', depth: 10, bookSeq: null, resyncs: 0 };

  constructor(
    private readonly client: GatewayClient,
    /** The page's one stream connection: the book is a watch on it. */
    private readonly connection: LiveConnection,
    private readonly table: HTMLTableElement,
    private readonly groupSelect: HTMLSelectElement,
    private readonly depthSelect: HTMLSelectElement,
    private readonly hooks: BookPanelHooks,
  ) {
    groupSelect.innerHTML = GROUPINGS.map((g) => `<option value="${escapeHtml(g.value)}">${escapeHtml(g.label)}</option>`).join('');
    depthSelect.innerHTML = DEPTHS.map((d) => `<option value="${d}"${d === this.depth ? ' selected' : ''}>${d}</option>`).join('');
    groupSelect.addEventListener('change', () => this.setView(groupSelect.value, this.depth));
    depthSelect.addEventListener('change', () => this.setView(this.group, Number(depthSelect.value)));
  }

  /** Best bid and ask (null when that side is empty). */
  best(): { bid: string | null; ask: string | null } {
    const b = this.feed?.book;
    return { bid: b?.bids[0]?.[0] ?? null, ask: b?.asks[0]?.[0] ?? null };
  }

  /** Shows another market (a new subscription). */
  show(market: string): void {
    this.feed?.stop();
    this.probe.market = market;
    this.probe.bookSeq = null;
    this.draw(null);
    this.feed = new OrderBookFeed({
      client: this.client,
      connection: this.connection,
      market,
      view: this.view(),
      onBook: (book) => this.draw(book),
      onResync: () => {
        this.probe.resyncs++;
      },
      onError: (err) => this.hooks.onError(err),
      onRefused: (err) => this.hooks.onRefused(err),
    });
    this.feed.start();
  }

  private setView(group: string, depth: number): void {
    this.group = group;
    this.depth = depth;
    this.probe.group = group;
    this.probe.depth = depth;
    this.probe.bookSeq = null;
    this.draw(null);
    this.feed?.setView(this.view());
  }

  private view(): { depth: number; group: string } {
    return { depth: this.depth, group: this.group };
  }

  private draw(book: DeltaOrderBook | null): void {
    this.probe.bookSeq = book?.bookSeq ?? null;
    const bids = book?.bids.slice(0, this.depth) ?? [];
    const asks = book?.asks.slice(0, this.depth) ?? [];
    // One number of decimals for the whole column: the best ask's (else the best bid's).
    const reference = asks[0]?.[0] ?? bids[0]?.[0] ?? null;
    const row = (side: 'bid' | 'ask') => (l: BookLevel) =>
      `<tr data-testid="book-${side}" data-price="${escapeHtml(l[0])}"><td class="${side === 'bid' ? 'buy' : 'sell'}">${px(this.probe.market, l[0], reference)}</td><td>${sz(this.probe.market, l[1])}</td><td class="dim" data-testid="book-count">${l[2]}</td></tr>`;
    const spread = bids[0] && asks[0] ? px(this.probe.market, subDecimal(asks[0][0], bids[0][0]), asks[0][0]) : '—';
    this.table.innerHTML =
      `<tr><th>Price</th><th>Size</th><th title="orders at this level">Orders</th></tr>` +
      asks.slice().reverse().map(row('ask')).join('') +
      `<tr><td colspan="3" class="dim" style="text-align:center" data-testid="book-spread">spread ${spread}${book ? ` · book seq ${book.bookSeq ?? '–'}` : ''}</td></tr>` +
      bids.map(row('bid')).join('');
    if (bids.length + asks.length > 0) this.hooks.onPainted();
  }
}
