// Every market's order book kept from the engine events (src/projections/order-book.ts), with the
// engine's polled book as the reconciliation source (docs/stream.md "Order book from events"):
//
//   - Seeding: a market's book is kept from the first time a connection asks for its deltas (no
//     cost for a deployment without delta clients); it starts from the engine's book read at full depth (its seq S); the
//     events of that market received before the read answered are held and those after S applied.
//     Until then the market has no book (views of it wait; no frame is sent).
//   - Reconciliation: every poll of the engine's book whose seq equals this book's seq must show
//     the same best levels. A divergence is repaired from the poll (counted in
//     bff_book_divergences_total, logged) and the listeners are told so they send fresh snapshots.
//   - A history replacement empties every book; they are seeded again.
import { Counter, type Registry } from 'prom-client';
import { parseDecimal } from '../decimal.js';
import { MarketBook, type TouchedLevel } from '../projections/order-book.js';
import type { EngineEvent } from '../contracts/engine-event.js';

/** The engine's book as read from GET /v1/orderbook. */
export interface EngineBook {
  market: string;
  seq: number;
  bids: ReadonlyArray<readonly [string, string]>;
  asks: ReadonlyArray<readonly [string, string]>;
}

export interface BookKeeperOptions {
  /** Reads the engine's book of one market at `depth` (the seed). */
  readBook(market: string, depth: number): Promise<EngineBook | null>;
  /** The book of `market` changed with this event. */
  changed(market: string, event: EngineEvent, touched: TouchedLevel[]): void;
  /** The book of `market` was (re)built from the engine: send it whole. */
  rebuilt(market: string): void;
  registry: Registry;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** The engine serves at most this many levels per side: the seed reads them all. */
export const SEED_DEPTH = 100;
/** Events held per market while its seed is being read; past this the oldest are dropped and the seed is read again. */
const MAX_HELD = 50_000;
const BOOK_KINDS = new Set(['engine.order_placed', 'engine.order_filled', 'engine.order_cancelled']);

const byRegistry = new WeakMap<Registry, { divergences: Counter<'market'> }>();

function metricsFor(registry: Registry): { divergences: Counter<'market'> } {
  let m = byRegistry.get(registry);
  if (!m) {
    m = {
      divergences: new Counter({
        name: 'bff_book_divergences_total',
        help: 'Order books kept from events that differed from the engine polled book at the same seq (repaired from the poll), by market',
        labelNames: ['market'],
        registers: [registry],
      }),
    };
    byRegistry.set(registry, m);
  }
  return m;
}

interface Seeding {
  held: EngineEvent[];
  /** Bumped on reset: an answer of an older generation is ignored. */
  generation: number;
}

export class BookKeeper {
  private readonly books = new Map<string, MarketBook>();
  private readonly seeding = new Map<string, Seeding>();
  private generation = 0;
  private stopped = false;
  private readonly metrics: { divergences: Counter<'market'> };

  constructor(private readonly options: BookKeeperOptions) {
    this.metrics = metricsFor(options.registry);
  }

  /** The book of a market, null until seeded. */
  book(market: string): MarketBook | null {
    return this.books.get(market) ?? null;
  }

  /** Markets whose book exists or is being seeded. */
  tracked(): string[] {
    return [...new Set([...this.books.keys(), ...this.seeding.keys()])];
  }

  static concerns(event: EngineEvent): boolean {
    return event.market !== undefined && BOOK_KINDS.has(event.kind);
  }

  /** Starts seeding the books of these markets (the engine's market list). */
  track(markets: Iterable<string>): void {
    for (const m of markets) if (!this.books.has(m)) this.seed(m);
  }

  /** One engine event, in seq order. */
  event(event: EngineEvent): void {
    if (!BookKeeper.concerns(event)) return;
    const market = event.market!;
    const book = this.books.get(market);
    if (!book) {
      // Books are kept from the first time a delta connection asks for the market on.
      const s = this.seeding.get(market);
      if (!s) return;
      s.held.push(event);
      if (s.held.length > MAX_HELD) s.held.splice(0, s.held.length - MAX_HELD);
      return;
    }
    // A book seeded from the engine already holds every event up to its seq (the stream may still
    // be delivering events older than the read).
    if (event.seq <= book.seq) return;
    const touched = book.apply(event);
    if (touched.length > 0) this.options.changed(market, event, touched);
  }

  private seed(market: string): Seeding {
    let s = this.seeding.get(market);
    if (s) return s;
    s = { held: [], generation: this.generation };
    this.seeding.set(market, s);
    const attempt = (delayMs: number): void => {
      const run = async (): Promise<void> => {
        if (this.stopped || this.seeding.get(market) !== s) return;
        let answer: EngineBook | null = null;
        try {
          answer = await this.options.readBook(market, SEED_DEPTH);
        } catch (err) {
          if ((err as { status?: unknown }).status === 400) {
            // The engine does not know the market (a filter kept while the market list was not known yet): nothing to keep.
            this.seeding.delete(market);
            return;
          }
          this.options.logger.warn({ market, err: (err as Error).message }, 'order book: seed read failed; retrying');
        }
        if (this.stopped || this.seeding.get(market) !== s || s.generation !== this.generation) return;
        if (!answer) return attempt(Math.min(5_000, delayMs * 2 + 100));
        this.seeded(market, s, answer);
      };
      setTimeout(() => void run(), delayMs).unref();
    };
    attempt(0);
    return s;
  }

  private seeded(market: string, s: Seeding, answer: EngineBook): void {
    const book = new MarketBook(market);
    book.replaceLevels(toLevels(answer.bids), toLevels(answer.asks), answer.seq, SEED_DEPTH);
    for (const e of s.held) if (e.seq > answer.seq) book.apply(e);
    this.seeding.delete(market);
    this.books.set(market, book);
    this.options.logger.info({ market, seq: book.seq, held: s.held.length }, 'order book: seeded from the engine');
    this.options.rebuilt(market);
  }

  /**
   * A poll of the engine's book (the reconciliation source). Compared only when it is as of the
   * same book seq as ours: an older or newer poll says nothing about a divergence.
   */
  reconcile(engine: EngineBook, depth: number): boolean {
    const book = this.books.get(engine.market);
    if (!book || book.seq !== engine.seq) return false;
    const bids = toLevels(engine.bids);
    const asks = toLevels(engine.asks);
    if (sameLevels(book, 'buy', bids, depth) && sameLevels(book, 'sell', asks, depth)) return false;
    this.metrics.divergences.inc({ market: engine.market });
    this.options.logger.warn(
      { market: engine.market, seq: engine.seq, bestBid: engine.bids[0]?.[0] ?? null, bestAsk: engine.asks[0]?.[0] ?? null },
      'order book: the book kept from events differs from the engine book at the same seq; repaired from the engine',
    );
    book.replaceLevels(bids, asks, engine.seq, depth);
    this.options.rebuilt(engine.market);
    return true;
  }

  /** The engine history was replaced: every book is read again. */
  reset(): void {
    this.generation++;
    const markets = this.tracked();
    this.books.clear();
    this.seeding.clear();
    this.track(markets);
  }

  stop(): void {
    this.stopped = true;
  }
}

function toLevels(levels: ReadonlyArray<readonly [string, string]>): Array<[bigint, bigint]> {
  return levels.map(([p, s]) => [parseDecimal(p), parseDecimal(s)]);
}

/** Do the best `depth` levels of our side equal the engine's (its answer holds at most `depth`)? */
function sameLevels(book: MarketBook, side: 'buy' | 'sell', engine: ReadonlyArray<readonly [bigint, bigint]>, depth: number): boolean {
  let i = 0;
  for (const level of book.side(side).view()) {
    if (i >= depth) break;
    const e = engine[i];
    if (!e || e[0] !== level.price || e[1] !== level.size) return false;
    i++;
  }
  return i === Math.min(engine.length, depth);
}
