// The order book panel: one market's book kept from `orderbook.delta` frames by the client's
// OrderBookFeed (snapshot, then deltas checked by chain and CRC-32; a fresh subscription on a gap
// or a mismatch), drawn with each level's order count. The grouping and depth selectors change the
// subscription's view (docs/stream.md "Order book deltas"); nothing here polls.
import { OrderBookFeed, addDecimal, compareDecimal, divDecimal, formatDecimal, mulDecimal, roundDecimal, subDecimal, type BookLevel, type DeltaOrderBook, type GatewayClient, type GatewayError, type LiveConnection, type Market } from '@gateway/client';
import { escapeHtml, px, sz } from './format.js';

/** A power of ten as an exact decimal string: 10^e. */
function powerOfTen(e: number): string {
  return e >= 0 ? `1${'0'.repeat(e)}` : `0.${'0'.repeat(-e - 1)}1`;
}

/**
 * Grouping choices for one market at its price (the gateway's `group`): `none`, then tick multiples
 * from the grid's own tick at that price up to 1 % of it, then significant figures coarser than the
 * tick up to 2 % of it. A ~$144 market so gets 0.01, 0.1 and 1, never a 1000 bucket that holds the
 * whole book. Without a price (no trade yet) only `none`.
 */
export function groupingsFor(m: Pick<Market, 'priceSigFigs' | 'maxPriceDecimals'>, price: string | null | undefined): Array<{ value: string; label: string }> {
  const options = [{ value: 'none', label: 'none' }];
  const p = Number(price);
  if (!(p > 0)) return options;
  const magnitude = Math.floor(Math.log10(p));
  const tickExp = -Math.min(m.maxPriceDecimals, Math.max(0, m.priceSigFigs - 1 - magnitude));
  const share = (e: number): string => `${Number(((10 ** e / p) * 100).toPrecision(2))}%`;
  for (let e = tickExp; 10 ** e <= p * 0.01; e++) options.push({ value: `tick:${powerOfTen(e)}`, label: `${powerOfTen(e)} (${share(e)})` });
  for (let n = 5; n >= 2; n--) {
    const e = magnitude + 1 - n; // the bucket of n significant figures at this price
    if (e > tickExp && 10 ** e <= p * 0.02) options.push({ value: `sig:${n}`, label: `${n} sig. figs (${share(e)})` });
  }
  return options;
}
type Groupings = (price: string | null) => ReadonlyArray<{ value: string; label: string }>;

export const DEPTHS = [5, 10, 20, 50] as const;

export interface BookPanelHooks {
  /** After each drawing that showed levels (first-paint timing). */
  onPainted(): void;
  onError(err: unknown): void;
  onRefused(err: GatewayError): void;
  /** A level was clicked: its exact price (10-place decimal). */
  onPrice?(price: string): void;
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
  private readonly asksBody: HTMLElement;
  private readonly bidsBody: HTMLElement;
  private readonly spreadCell: HTMLElement;
  private group = 'none';
  private groupings: Groupings = () => [{ value: 'none', label: 'none' }];
  /** Whether the grouping choices were made from a price (else the book's first level gives one). */
  private priced = false;
  private depth = 10;
  readonly probe: BookProbe = { market: '', group: 'none', depth: 10, bookSeq: null, resyncs: 0 };

  constructor(
    private readonly client: GatewayClient,
    /** The page's one stream connection: the book is a watch on it. */
    private readonly connection: LiveConnection,
    /** The book's container: asks above the spread, bids below (#book-asks-rows, #book-spread, #book-bids-rows). */
    private readonly table: HTMLElement,
    private readonly groupSelect: HTMLSelectElement,
    private readonly depthSelect: HTMLSelectElement,
    private readonly hooks: BookPanelHooks,
  ) {
    this.asksBody = table.querySelector<HTMLElement>('#book-asks-rows')!;
    this.bidsBody = table.querySelector<HTMLElement>('#book-bids-rows')!;
    this.spreadCell = table.querySelector<HTMLElement>('#book-spread')!;
    // A click on a level hands its price to the ticket.
    table.addEventListener('click', (ev) => {
      const row = (ev.target as HTMLElement).closest<HTMLElement>('tr[data-price]');
      if (row?.dataset.price) this.hooks.onPrice?.(row.dataset.price);
    });
    depthSelect.innerHTML = DEPTHS.map((d) => `<option value="${d}"${d === this.depth ? ' selected' : ''}>${d}</option>`).join('');
    groupSelect.addEventListener('change', () => this.setView(groupSelect.value, this.depth));
    depthSelect.addEventListener('change', () => this.setView(this.group, Number(depthSelect.value)));
  }

  /** Best bid and ask (null when that side is empty). */
  best(): { bid: string | null; ask: string | null } {
    const b = this.feed?.book;
    return { bid: b?.bids[0]?.[0] ?? null, ask: b?.asks[0]?.[0] ?? null };
  }

  /**
   * Shows another market (a new subscription), with the grouping choices of its tick and price
   * (`groupings` of a price); a market with no trade yet is priced by its book once it shows one.
   */
  show(market: string, groupings: Groupings = () => [{ value: 'none', label: 'none' }], price: string | null = null): void {
    this.feed?.stop();
    this.groupings = groupings;
    this.priced = price !== null;
    this.renderGroupings(price);
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

  private renderGroupings(price: string | null): void {
    const options = this.groupings(price);
    // A grouping the new market does not offer (a 100 bucket on a $144 market) falls back to none.
    if (!options.some((g) => g.value === this.group)) this.group = this.probe.group = 'none';
    this.groupSelect.innerHTML = options.map((g) => `<option value="${escapeHtml(g.value)}"${g.value === this.group ? ' selected' : ''}>${escapeHtml(g.label)}</option>`).join('');
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
    const market = this.probe.market;
    // One number of decimals for the whole column: the best ask's (else the best bid's).
    const reference = asks[0]?.[0] ?? bids[0]?.[0] ?? null;
    if (!this.priced && reference !== null) {
      this.priced = true;
      this.renderGroupings(reference);
    }
    // Cumulative size from the spread outwards (exact), and the depth bar of each level against the deeper side's total.
    const cumulative = (levels: BookLevel[]): string[] => {
      let total = '0';
      return levels.map((l) => (total = addDecimal(total, l[1])));
    };
    const bidTotals = cumulative(bids);
    const askTotals = cumulative(asks);
    const deepest = [bidTotals.at(-1), askTotals.at(-1)].filter((t): t is string => t !== undefined).reduce((a, b) => (compareDecimal(a, b) >= 0 ? a : b), '0');
    const share = (total: string): number => {
      const ratio = divDecimal(total, deepest);
      return ratio === null ? 0 : Math.round(Number(roundDecimal(mulDecimal(ratio, '100'), 1)));
    };
    const row = (side: 'bid' | 'ask') => (l: BookLevel, i: number) => {
      const total = side === 'bid' ? bidTotals[i]! : askTotals[i]!;
      const bar = `background:linear-gradient(to left, var(--${side === 'bid' ? 'buy' : 'sell'}-bg) ${share(total)}%, transparent ${share(total)}%)`;
      return `<tr class="level" data-testid="book-${side}" data-price="${escapeHtml(l[0])}" style="${bar}"><td class="${side === 'bid' ? 'buy' : 'sell'}" data-col="price">${px(market, l[0], reference)}</td><td data-col="size">${sz(market, l[1])}</td><td class="dim" data-col="total">${sz(market, total)}</td><td class="dim" data-testid="book-count">${l[2]}</td></tr>`;
    };
    this.asksBody.innerHTML = asks.map(row('ask')).reverse().join('');
    this.bidsBody.innerHTML = bids.map(row('bid')).join('');
    const spread = bids[0] && asks[0] ? subDecimal(asks[0][0], bids[0][0]) : null;
    const spreadPct = spread !== null && bids[0] ? divDecimal(mulDecimal(spread, '100'), asks[0]![0]) : null;
    this.spreadCell.textContent = `spread ${spread !== null ? px(market, spread, reference) : '–'}${spreadPct !== null ? ` (${formatDecimal(spreadPct, 3)}%)` : ''}${book ? ` · book seq ${book.bookSeq ?? '–'}` : ''}`;
    if (bids.length + asks.length > 0) this.hooks.onPainted();
  }
}
