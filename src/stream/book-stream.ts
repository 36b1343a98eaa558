// The order book part of the live runtime, behind one small surface so the runtime only wires it:
// engine events in (BookKeeper keeps the books), book frames out (BookViews makes them per view),
// the poller's reads in (seed and reconciliation), the snapshot frames of a new delta connection.
import type { Registry } from 'prom-client';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import { BookKeeper, type BookKeeperOptions, type EngineBook } from './book-keeper.js';
import { BookViews } from './book-views.js';
import type { Subscription } from './subscription.js';
import type { Clock } from '../contracts/clock.js';
import { TickGroupings } from './tick-groupings.js';

export interface BookStreamOptions {
  readBook(market: string, depth: number): Promise<EngineBook | null>;
  /** The seed order by order (BookKeeperOptions.readOrders); absent without a database. */
  readOrders?: BookKeeperOptions['readOrders'];
  position?: BookKeeperOptions['position'];
  mirrorWaitMs?: number;
  publish(frame: Frame): number;
  registry: Registry;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** The seed's and the views' time (default systemClock). */
  clock?: Clock;
}

export class BookStream {
  readonly keeper: BookKeeper;
  readonly views: BookViews;
  /** Distinct `tick:` groupings held by connections, bounded (tick-groupings.ts). */
  readonly ticks = new TickGroupings();

  constructor(options: BookStreamOptions) {
    const clock = options.clock;
    this.views = new BookViews({ keeper: () => this.keeper, publish: options.publish, ...(clock ? { clock } : {}) });
    this.keeper = new BookKeeper({
      readBook: options.readBook,
      readOrders: options.readOrders ?? null,
      ...(options.position ? { position: options.position } : {}),
      ...(options.mirrorWaitMs !== undefined ? { mirrorWaitMs: options.mirrorWaitMs } : {}),
      changed: (market, event) => this.views.changed(market, event),
      rebuilt: (market) => this.views.rebuilt(market),
      registry: options.registry,
      logger: options.logger,
      ...(clock ? { clock } : {}),
    });
  }

  /** One engine event, in seq order (after its other frames were published); its deltas wait for `endOfBatch`. */
  event(event: EngineEvent): void {
    this.keeper.event(event);
  }

  /** The group of events ended (the runtime's LiveFeature.endOfBatch): its book deltas are made once, now. */
  endOfBatch(): void {
    this.views.flush();
  }

  private known: ReadonlySet<string> | null = null;

  /** The engine's market list (the markets a delta connection without a markets filter gets). */
  markets(known: ReadonlySet<string>): void {
    this.known = known;
  }

  /** A poll of the engine's book: compared with the book kept from events at the same seq. */
  polled(book: EngineBook, depth: number): void {
    this.keeper.reconcile(book, depth);
  }

  /** The view's snapshot frames of a delta connection (none for a connection without a view). */
  snapshot(sub: Subscription): Frame[] {
    // Inside a batch the views are as last sent (not the book's newest state): the batch's delta
    // follows the snapshot and continues its chain.
    if (!sub.book) return [];
    if (sub.kinds && !sub.kinds.has('orderbook.snapshot')) return [];
    const markets = sub.markets ? [...sub.markets] : [...new Set([...(this.known ?? []), ...this.views.markets()])];
    // Unknown markets (rule 1 keeps a filter while the list is not known yet) are not read from the engine.
    this.keeper.track(this.known ? markets.filter((m) => this.known!.has(m)) : markets);
    return this.views.snapshotFrames(markets, sub.book);
  }

  /** The engine's history was replaced (the stream resumes after `head`): books are read again, views made again. */
  reset(head: number | null = null): void {
    this.views.reset();
    this.keeper.reset(head);
  }

  stop(): void {
    this.keeper.stop();
    this.views.stop();
  }
}
