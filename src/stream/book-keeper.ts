// Every market's order book kept from the engine events (src/projections/order-book.ts), with the
// engine's polled book as the safety net (docs/stream.md "Order book from events", ADR 0110):
//
//   - Seeding, order by order: a market's book is kept from the first time a connection asks for its
//     deltas (no cost for a deployment without delta clients). From then on the market's events are
//     held; the mirror's resting orders of the market are read in one snapshot together with the
//     newest seq M of its `events`, again until M reaches the point the holding started from
//     (the mirror lags the engine by moments); the book is those orders plus the held events after M.
//     Every later event then applies, a cancel of an order that rested long before included: the
//     book cannot drift. Its seq (the engine's book seq) is the last event after M that changed it,
//     else the engine's own book seq once the engine's read shows one the stream has delivered.
//     Until then the market has no book (views of it wait; no frame is sent).
//   - Without a database (or a mirror that does not reach the point in BOOK_MIRROR_WAIT_MS, or that
//     holds another history) the book starts from the engine's price levels read at full depth (its
//     seq S; the held events after S applied), as before: such a book may drift on a cancel of an
//     order behind its levels; with a database it is re-seeded order by order in the background.
//   - Reconciliation: every poll of the engine's book whose seq equals this book's seq must show
//     the same best levels. A divergence is a defect: it is repaired from the poll at once, counted
//     in bff_book_divergences_total, logged (warn), and the listeners are told so they send fresh
//     snapshots; the book is then re-seeded order by order (a repaired level has no orders behind it).
//   - A history replacement empties every book; they are seeded again, from a mirror that holds the
//     new history (its event at the first seq the stream delivered after the replacement has the
//     same kind and engine time).
import { Counter, type Registry } from 'prom-client';
import { parseDecimal } from '../decimal.js';
import { MarketBook, type TouchedLevel } from '../projections/order-book.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { BookSeed } from '../contracts/book-seed.js';
import { eventFingerprint } from '../engine/fingerprint.js';
import { systemClock, type Clock } from '../contracts/clock.js';

/** The engine's book as read from GET /v1/orderbook. */
export interface EngineBook {
  market: string;
  seq: number;
  bids: ReadonlyArray<readonly [string, string]>;
  asks: ReadonlyArray<readonly [string, string]>;
}

export interface BookKeeperOptions {
  /** Reads the engine's book of one market at `depth` (the seq of a seed; the seed without a database). */
  readBook(market: string, depth: number): Promise<EngineBook | null>;
  /**
   * Reads the mirror's resting orders of one market in one snapshot (null: no database, or an empty
   * mirror). `anchorSeq`: also the mirror's event at that seq (BookSeed.anchor), whose fingerprint
   * must be the one the stream delivered there.
   */
  readOrders?: ((market: string, anchorSeq: number | null) => Promise<BookSeed | null>) | null;
  /** The live source's position: the seq of the last event delivered, else the point it starts after (null: unknown). */
  position?: () => number | null;
  /** The book of `market` changed with this event. */
  changed(market: string, event: EngineEvent, touched: TouchedLevel[]): void;
  /** The book of `market` was (re)built: send it whole. */
  rebuilt(market: string): void;
  registry: Registry;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** How long a seed waits for the mirror to reach the point its holding started from (BOOK_MIRROR_WAIT_MS). */
  mirrorWaitMs?: number;
  /** Times the seed's waits and retries (default systemClock). */
  clock?: Clock;
}

/** The engine serves at most this many levels per side: the seed reads them all. */
export const SEED_DEPTH = 100;
/** Events held per market while its seed is being read; past this the seed starts over from the current position. */
const MAX_HELD = 10_000;
/** Default of BookKeeperOptions.mirrorWaitMs. */
export const MIRROR_WAIT_MS = 10_000;
/** Between two reads of a mirror that is behind the holding point. */
const MIRROR_RETRY_MS = 100;
const BOOK_KINDS = new Set(['engine.order_placed', 'engine.order_filled', 'engine.order_cancelled']);

type SeedSource = 'orders' | 'levels';

interface BookMetrics {
  divergences: Counter<'market'>;
  seeds: Counter<'market' | 'source'>;
}

const byRegistry = new WeakMap<Registry, BookMetrics>();

function metricsFor(registry: Registry): BookMetrics {
  let m = byRegistry.get(registry);
  if (!m) {
    m = {
      divergences: new Counter({
        name: 'bff_book_divergences_total',
        help: 'Order books kept from events that differed from the engine polled book at the same seq (a defect: repaired from the poll, then re-seeded order by order), by market',
        labelNames: ['market'],
        registers: [registry],
      }),
      seeds: new Counter({
        name: 'bff_book_seeds_total',
        help: 'Order books kept from events built, by market and source: orders (the mirror, order by order: cannot drift) or levels (the engine price levels: no database or mirror behind; may drift until re-seeded)',
        labelNames: ['market', 'source'],
        registers: [registry],
      }),
    };
    byRegistry.set(registry, m);
  }
  return m;
}

interface Seeding {
  /** Every event of the market after this seq is in `held` (or applied to `candidate`). */
  holdFrom: number | null;
  held: EngineEvent[];
  /** Bumped on reset: work of an older generation is dropped. */
  generation: number;
  /** The order-by-order book being completed (its seq not known yet); events apply to it directly. */
  candidate: MarketBook | null;
  startedAt: number;
}

export class BookKeeper {
  private readonly books = new Map<string, MarketBook>();
  private readonly seeding = new Map<string, Seeding>();
  /** How each book was built: a `levels` book is re-seeded order by order when a mirror is there. */
  private readonly sources = new Map<string, SeedSource>();
  private generation = 0;
  private stopped = false;
  private readonly metrics: BookMetrics;
  private readonly clock: Clock;
  /** Seq of the last event seen (any kind). */
  private lastSeen: number | null = null;
  /** After a history replacement: the first event seen, which the mirror must hold too (null: no check). */
  private anchor: { seq: number; print: string } | null = null;
  private awaitingAnchor = false;
  /** The head the stream resumed after when the history was last replaced (null: never replaced). */
  private replacedAt: number | null = null;
  private warnedNoMirror = false;

  constructor(private readonly options: BookKeeperOptions) {
    this.metrics = metricsFor(options.registry);
    this.clock = options.clock ?? systemClock;
  }

  /** The book of a market, null until seeded. */
  book(market: string): MarketBook | null {
    return this.books.get(market) ?? null;
  }

  /** Markets whose book exists or is being seeded. */
  tracked(): string[] {
    return [...new Set([...this.books.keys(), ...this.seeding.keys()])];
  }

  /** How the market's book was built (orders: from the mirror; levels: from the engine's levels), null without a book. */
  source(market: string): SeedSource | null {
    return this.books.has(market) ? (this.sources.get(market) ?? null) : null;
  }

  static concerns(event: EngineEvent): boolean {
    return event.market !== undefined && BOOK_KINDS.has(event.kind);
  }

  /** Starts seeding the books of these markets (the engine's market list). */
  track(markets: Iterable<string>): void {
    for (const m of markets) if (!this.books.has(m)) this.seed(m);
  }

  /** One engine event, in seq order (every kind: the keeper follows the position). */
  event(event: EngineEvent): void {
    this.lastSeen = event.seq;
    if (this.awaitingAnchor) {
      this.awaitingAnchor = false;
      this.anchor = { seq: event.seq, print: eventFingerprint(event) };
    }
    if (BookKeeper.concerns(event)) {
      const market = event.market!;
      const book = this.books.get(market);
      // A book already holds every event up to `through` (a seed read ahead of the stream).
      if (book && event.seq > book.through) {
        const touched = book.apply(event);
        if (touched.length > 0) this.options.changed(market, event, touched);
      }
      const s = this.seeding.get(market);
      if (s && !s.candidate) {
        s.held.push(event);
        // Too much held (a mirror far behind): start over from here, the held events dropped.
        if (s.held.length > MAX_HELD) {
          s.held = [];
          s.holdFrom = event.seq;
        }
      } else if (s?.candidate && event.seq > s.candidate.through) s.candidate.apply(event);
    }
    // A candidate completes with an event that sets its seq, or once the stream reaches what it holds.
    if (this.seeding.size > 0) for (const [market, s] of [...this.seeding]) if (s.candidate) this.completeCandidate(market, s);
  }

  private seed(market: string): void {
    if (this.seeding.has(market) || this.stopped) return;
    const s: Seeding = { holdFrom: this.position(), held: [], generation: this.generation, candidate: null, startedAt: this.clock.now() };
    this.seeding.set(market, s);
    const live = (): boolean => !this.stopped && this.seeding.get(market) === s && s.generation === this.generation;
    const later = (ms: number, step: () => Promise<void>): void => {
      this.clock.setTimeout(() => {
        if (live()) step().catch((err: unknown) => this.options.logger.warn({ market, err: (err as Error).message }, 'order book: seed step failed'));
      }, ms).unref();
    };
    const readOrders = this.options.readOrders ?? null;
    const waitMs = this.options.mirrorWaitMs ?? MIRROR_WAIT_MS;
    let backoff = MIRROR_RETRY_MS;

    // 1. The mirror's orders at a seq at or past the holding point.
    const fromMirror = async (): Promise<void> => {
      if (!readOrders) return fromLevels();
      if (s.holdFrom === null) s.holdFrom = this.position();
      let seed: BookSeed | null = null;
      let why = '';
      try {
        seed = await readOrders(market, this.anchor?.seq ?? null);
      } catch (err) {
        why = `read failed: ${(err as Error).message}`;
      }
      if (!live()) return;
      const sameHistory = !this.awaitingAnchor && (this.anchor === null || (seed?.anchor != null && eventFingerprint(seed.anchor) === this.anchor.print));
      if (seed && s.holdFrom !== null && seed.asOfSeq >= s.holdFrom && sameHistory) {
        return this.fromSeed(market, s, seed, later);
      }
      if (!why) {
        why = !seed ? 'empty mirror' : s.holdFrom === null ? 'stream position unknown' : seed.asOfSeq < s.holdFrom ? `mirror at ${seed.asOfSeq}, stream at ${s.holdFrom}` : 'mirror does not hold the history streamed since its replacement';
      }
      // Waited long enough with nothing to show: the engine's levels meanwhile, the mirror read again later.
      if (!this.books.has(market) && this.clock.now() - s.startedAt >= waitMs) {
        this.options.logger.warn({ market, reason: why }, 'order book: the mirror cannot seed the book yet; seeded from the engine price levels meanwhile');
        await fromLevels();
      }
      if (!live()) return;
      backoff = this.books.has(market) ? Math.min(5_000, backoff * 2) : MIRROR_RETRY_MS;
      later(backoff, fromMirror);
    };

    // 2. Without a mirror: the engine's price levels (may drift; see the header).
    const fromLevels = async (): Promise<void> => {
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
      if (!live()) return;
      if (!answer) {
        if (!readOrders) later(Math.min(5_000, (backoff *= 2)), fromLevels);
        return;
      }
      const book = new MarketBook(market);
      book.replaceLevels(toLevels(answer.bids), toLevels(answer.asks), answer.seq, SEED_DEPTH);
      for (const e of s.held) if (e.seq > book.through) book.apply(e);
      this.install(market, book, 'levels', s.startedAt);
      if (!readOrders) {
        this.seeding.delete(market);
        if (!this.warnedNoMirror) {
          this.warnedNoMirror = true;
          this.options.logger.warn({ market }, 'order book: no database; books are seeded from the engine price levels and may drift on a cancel of an order resting before the seed (bff_book_divergences_total)');
        }
      }
    };

    later(0, fromMirror);
  }

  /** The mirror's orders plus the held events after them; installed once the book's seq is known. */
  private fromSeed(market: string, s: Seeding, seed: BookSeed, later: (ms: number, step: () => Promise<void>) => void): Promise<void> {
    const candidate = new MarketBook(market);
    candidate.seedOrders(seed.orders, seed.asOfSeq);
    s.candidate = candidate;
    for (const e of s.held) if (e.seq > candidate.through) candidate.apply(e);
    s.held = [];
    if (this.completeCandidate(market, s)) return Promise.resolve();
    // No event after the seed changed the book yet: its seq is the engine's, read until the engine
    // shows one the stream has delivered (an event may set it first: `event`).
    let wait = 20;
    const learnSeq = async (): Promise<void> => {
      let answer: EngineBook | null = null;
      try {
        answer = await this.options.readBook(market, SEED_DEPTH);
      } catch {
        // read again below
      }
      if (this.seeding.get(market) !== s || s.candidate !== candidate) return;
      const at = this.position();
      if (answer && at !== null && answer.seq <= at && this.completeCandidate(market, s, answer.seq)) {
        // The first comparison with the engine, right away.
        this.reconcile(answer, SEED_DEPTH);
        return;
      }
      later((wait = Math.min(1_000, wait * 2)), learnSeq);
    };
    later(0, learnSeq);
    return Promise.resolve();
  }

  /**
   * Installs the candidate once the stream has delivered everything it holds and its seq is known:
   * set by an event after the seed, else the seq of the book it replaces, else `engineSeq` (the
   * engine's book seq, read at a point the stream has passed).
   */
  private completeCandidate(market: string, s: Seeding, engineSeq?: number): boolean {
    const candidate = s.candidate!;
    const at = this.position();
    if (at === null || at < candidate.through) return false;
    const current = this.books.get(market);
    const seq = candidate.seq > 0 ? candidate.seq : current ? current.seq : engineSeq;
    if (seq === undefined) return false;
    candidate.seq = seq;
    this.seeding.delete(market);
    this.install(market, candidate, 'orders', s.startedAt);
    return true;
  }

  private install(market: string, book: MarketBook, source: SeedSource, startedAt: number): void {
    const current = this.books.get(market);
    this.books.set(market, book);
    this.sources.set(market, source);
    this.metrics.seeds.inc({ market, source });
    this.options.logger.info({ market, source, seq: book.seq, orders: book.orderCount, tookMs: this.clock.now() - startedAt }, 'order book: seeded');
    // A re-seed that shows what the screens show already sends nothing.
    if (current && current.seq === book.seq && current.levelsKey() === book.levelsKey()) return;
    this.options.rebuilt(market);
  }

  private position(): number | null {
    // After a replacement the source may still report the old history's position until it delivers.
    if (this.replacedAt !== null) return this.lastSeen ?? this.replacedAt;
    const p = this.options.position?.() ?? null;
    if (p === null) return this.lastSeen;
    return this.lastSeen === null ? p : Math.max(p, this.lastSeen);
  }

  /**
   * A poll of the engine's book (the safety net). Compared only when it is as of the same book seq
   * as ours: an older or newer poll says nothing about a divergence.
   */
  reconcile(engine: EngineBook, depth: number): boolean {
    const book = this.books.get(engine.market);
    if (!book || book.seq !== engine.seq) return false;
    const bids = toLevels(engine.bids);
    const asks = toLevels(engine.asks);
    if (sameLevels(book, 'buy', bids, depth) && sameLevels(book, 'sell', asks, depth)) return false;
    this.metrics.divergences.inc({ market: engine.market });
    this.options.logger.warn(
      {
        market: engine.market,
        seq: engine.seq,
        source: this.sources.get(engine.market) ?? null,
        bestBid: engine.bids[0]?.[0] ?? null,
        bestAsk: engine.asks[0]?.[0] ?? null,
        ...firstDifference(book, bids, asks, depth),
      },
      'order book: the book kept from events differs from the engine book at the same seq; repaired from the engine, re-seeding order by order',
    );
    book.replaceLevels(bids, asks, engine.seq, depth);
    this.sources.set(engine.market, 'levels');
    this.options.rebuilt(engine.market);
    // A repaired level has no orders behind it: the book is seeded again, order by order.
    if (this.options.readOrders) this.seed(engine.market);
    return true;
  }

  /** The engine history was replaced (the stream goes on after `head` of the new one): every book is read again, from a mirror that holds the new history. */
  reset(head: number | null = null): void {
    this.generation++;
    this.replacedAt = head ?? 0;
    const markets = this.tracked();
    this.books.clear();
    this.seeding.clear();
    this.sources.clear();
    this.lastSeen = null;
    this.anchor = null;
    this.awaitingAnchor = true;
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

/** The first level that differs, for the log (what a person looks for first). */
function firstDifference(book: MarketBook, bids: ReadonlyArray<readonly [bigint, bigint]>, asks: ReadonlyArray<readonly [bigint, bigint]>, depth: number): object {
  for (const [side, engine] of [['buy', bids], ['sell', asks]] as const) {
    const ours = [...book.side(side).view()].slice(0, depth);
    for (let i = 0; i < Math.max(ours.length, Math.min(engine.length, depth)); i++) {
      const o = ours[i];
      const e = engine[i];
      if (o && e && o.price === e[0] && o.size === e[1]) continue;
      return { side, level: i, kept: o ? [String(o.price), String(o.size)] : null, engine: e ? [String(e[0]), String(e[1])] : null };
    }
  }
  return {};
}
