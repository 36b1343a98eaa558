// orderbook.snapshot frames (docs/stream.md): every `pollMs` the book of every active market is read at
// `depth` from the engine, and a frame is made only when the book's content hash changed since
// the last frame for that market. The market list (`GET /v1/markets`) is refreshed every
// `marketsRefreshMs`; it is also what rule 1 of the stream filters ("a markets filter that
// matches nothing") is judged against, for connections already open too (`onMarkets`). Polls never overlap: the next starts `pollMs` after the
// previous one finished.
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { EngineClient } from './client.js';
import { normalizeDecimal } from '../decimal.js';
import type { Frame } from '../contracts/frame.js';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';

export interface Book {
  market: string;
  seq: number;
  bids: Array<[string, string]>;
  asks: Array<[string, string]>;
}

export interface OrderbookPollerOptions {
  engine: EngineClient;
  depth: number;
  pollMs: number;
  marketsRefreshMs?: number;
  onFrame(frame: Frame): void;
  /** Every book read, changed or not (the reconciliation source of the books kept from events). */
  onBook?(book: Book, depth: number): void;
  /** Told when the market list is first loaded and whenever it changes (rule 1 is judged again). */
  onMarkets?(known: ReadonlySet<string>): void;
  logger: FastifyBaseLogger;
  /** Default systemClock. */
  clock?: Clock;
}

function levels(v: unknown): Array<[string, string]> | null {
  if (!Array.isArray(v)) return null;
  const out: Array<[string, string]> = [];
  for (const l of v) {
    if (!Array.isArray(l) || typeof l[0] !== 'string' || typeof l[1] !== 'string') return null;
    try {
      out.push([normalizeDecimal(l[0]), normalizeDecimal(l[1])]);
    } catch {
      return null;
    }
  }
  return out;
}

export function parseBook(v: unknown): Book | null {
  if (typeof v !== 'object' || v === null) return null;
  const b = v as Record<string, unknown>;
  const bids = levels(b.bids);
  const asks = levels(b.asks);
  if (typeof b.market !== 'string' || !Number.isSafeInteger(b.seq) || !bids || !asks) return null;
  return { market: b.market, seq: b.seq as number, bids, asks };
}

export function bookHash(bids: ReadonlyArray<[string, string]>, asks: ReadonlyArray<[string, string]>): string {
  return createHash('sha256').update(JSON.stringify([bids, asks])).digest('base64');
}

export class OrderbookPoller {
  private markets: string[] = [];
  private marketsLoadedAt = 0;
  private marketsKnown: ReadonlySet<string> | null = null;
  private readonly hashes = new Map<string, string>();
  private timer: ClockTimer | null = null;
  private stopped = false;
  private current: Promise<void> | null = null;
  private readonly clock: Clock;

  constructor(private readonly options: OrderbookPollerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** The engine's active markets, null until the first successful read. */
  get knownMarkets(): ReadonlySet<string> | null {
    return this.marketsKnown;
  }

  /** Every book is sent again at the next poll (the engine's history was replaced). */
  forget(): void {
    this.hashes.clear();
  }

  start(): void {
    if (this.timer || this.current) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.current = this.pollOnce().finally(() => {
        this.current = null;
        this.schedule(this.options.pollMs);
      });
    }, ms);
    this.timer.unref();
  }

  /**
   * What is failing now, with the number of failures since it started: a failure is logged when a
   * read goes from working to failing and again when it recovers, not on every poll (an engine
   * that is down would otherwise log several warnings a second).
   */
  private readonly failing = new Map<string, number>();

  private failed(what: string, fields: Record<string, unknown>, message: string): void {
    const count = this.failing.get(what);
    this.failing.set(what, (count ?? 0) + 1);
    if (count === undefined) this.options.logger.warn(fields, message);
  }

  private recovered(what: string, message: string, fields: Record<string, unknown> = {}): void {
    const count = this.failing.get(what);
    if (count === undefined) return;
    this.failing.delete(what);
    this.options.logger.info({ ...fields, failures: count }, message);
  }

  /** One round: refresh markets if due, then read every book; exposed for tests. */
  async pollOnce(): Promise<void> {
    await this.refreshMarkets();
    await Promise.all(this.markets.map((m) => this.pollMarket(m)));
  }

  private async refreshMarkets(): Promise<void> {
    if (this.marketsKnown && this.clock.now() - this.marketsLoadedAt < (this.options.marketsRefreshMs ?? 30_000)) return;
    try {
      const body = await this.options.engine.getJson<{ markets?: Array<{ symbol?: unknown; status?: unknown }> }>('/v1/markets');
      const symbols = (body.markets ?? [])
        .filter((m) => typeof m.symbol === 'string' && (m.status === undefined || m.status === 'active'))
        .map((m) => m.symbol as string);
      const previous = this.marketsKnown;
      const known = new Set(symbols);
      this.markets = symbols;
      this.marketsKnown = known;
      this.marketsLoadedAt = this.clock.now();
      for (const m of this.hashes.keys()) if (!known.has(m)) this.hashes.delete(m);
      const changed = previous === null || previous.size !== known.size || symbols.some((m) => !previous.has(m));
      if (changed && this.options.onMarkets) {
        try {
          this.options.onMarkets(known);
        } catch (err) {
          this.options.logger.error({ err }, 'order book poller: market list listener failed');
        }
      }
      this.recovered('markets', 'order book poller: the engine markets are readable again');
    } catch (err) {
      this.failed('markets', { err: (err as Error).message }, 'order book poller: could not read the engine markets (logged once until it recovers)');
    }
  }

  private async pollMarket(market: string): Promise<void> {
    let book: Book | null;
    try {
      const raw = await this.options.engine.getJson<unknown>(`/v1/orderbook?depth=${this.options.depth}&market=${encodeURIComponent(market)}`);
      book = parseBook(raw);
    } catch (err) {
      this.failed(`book ${market}`, { market, err: (err as Error).message }, 'order book poller: read failed (logged once until it recovers)');
      return;
    }
    this.recovered(`book ${market}`, 'order book poller: reads succeed again', { market });
    if (!book || this.stopped) return;
    this.options.onBook?.(book, this.options.depth);
    const hash = bookHash(book.bids, book.asks);
    if (this.hashes.get(market) === hash) return; // unchanged: nothing to send
    this.hashes.set(market, hash);
    this.options.onFrame({
      kind: 'orderbook.snapshot',
      seq: book.seq,
      ts: new Date(this.clock.now()).toISOString(),
      market,
      payload: { depth: this.options.depth, bids: book.bids, asks: book.asks },
    });
  }
}
