// The live path's features, listed once (docs/architecture.md "The live path"). Every follower of
// the engine's history, the stream's own projections included, is a LiveFeature
// (src/contracts/live-feature.ts) in FEATURE ORDER below; the runtime (src/live.ts) calls them in
// that order for each event, snapshot, replacement, start and stop, and knows none of them. A new
// feature is a module of its own and one entry here.
//
// Order matters where a feature relies on another having seen the same event, and it is the order
// of a connection's snapshot: the stream's own projections first (candles, positions, balances,
// trades, and the state their snapshot is made of), the session keys (a proof signed by a key the
// same chunk authorised verifies), then the commitment check, the accounts, the user channels, the
// trade tape, the open interest and last the order books (their deltas are made once per batch,
// after every other frame).
//
// What the HTTP edge asks of the features (an account, an order's end, the commitment status) is
// answered through `queries` (LiveFeatureQueries), so the edge never reaches a feature either.
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import type { FeatureSnapshot, LiveFeature } from './contracts/live-feature.js';
import type { Frame } from './contracts/frame.js';
import type { SessionKeys } from './auth/session-keys.js';
import { SessionLearning } from './auth/session-learning.js';
import { LiveCommitments } from './commitments/live-commitments.js';
import { CoreProjections } from './stream/core-projections.js';
import { AccountBook } from './stream/account-book.js';
import { UserFeed } from './stream/user-feed.js';
import { ClientOrders } from './stream/client-orders.js';
import { RecentTrades, tradesFromDatabase } from './stream/recent-trades.js';
import { BookStream } from './stream/book-stream.js';
import { OpenInterestFeed } from './stream/open-interest-feed.js';
import { loadOpenInterestSeed } from './db/queries/open-interest.js';
import { parseBook } from './engine/orderbook-poller.js';
import { loadBookSeed } from './db/queries/book-seed.js';
import { fetchLiveOrders } from './http/reads/live-orders.js';
import { listFills } from './db/queries/fills.js';
import { EMPTY_PAGE } from './db/queries/page.js';
import type { Subscription } from './stream/subscription.js';
import type { ComposeLiveFeatures } from './stream/live-composition.js';
import type { FastifyBaseLogger } from 'fastify';
import { systemClock, type Clock } from './contracts/clock.js';

export interface LiveFeatureDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  sessions: SessionKeys;
  /** Every feature's time and timers (default systemClock). */
  clock?: Clock;
}

/** The gateway's live features. */
export function liveFeatures(deps: LiveFeatureDeps): ComposeLiveFeatures {
  return (context) => {
    const { config, logger, db, engine, metrics } = deps;
    const clock = deps.clock ?? systemClock;
    const commitments = new LiveCommitments(metrics.registry, logger);
    const accounts = new AccountBook({
      db,
      logger,
      idleMs: config.accountIdleMs,
      maxReadParties: config.accountReadPartiesMax,
      registry: metrics.registry,
      clock,
    });
    const user = new UserFeed({
      liveOrders: async (party) => {
        const r = await fetchLiveOrders(engine, party, undefined, 2_000);
        return r.ok ? r.orders : null;
      },
      lastFills: async (party, n) => {
        if (!db.configured) return null;
        try {
          return (await db.read(EMPTY_PAGE, (sql) => listFills(sql, { party, limit: n }))).items;
        } catch {
          return null;
        }
      },
      head: context.head,
      logger,
    }, clock);
    const trades = new RecentTrades();
    const books = new BookStream({
      readBook: async (market, depth) => parseBook(await engine.getJson<unknown>(`/v1/orderbook?depth=${depth}&market=${encodeURIComponent(market)}`)),
      // Seeded order by order from the mirror (docs/stream.md "Order book from events", ADR 0110).
      readOrders: db.configured ? (market, anchor) => db.readSnapshot(null, (tx) => loadBookSeed(tx, market, anchor)) : null,
      position: context.head,
      mirrorWaitMs: config.bookMirrorWaitMs,
      publish: context.publish,
      registry: metrics.registry,
      logger,
      clock,
    });

    const clientOrders = new ClientOrders();
    const core = new CoreProjections({ db, logger, head: context.head });
    const features: LiveFeature<Subscription>[] = [
      core,
      new SessionLearning(deps.sessions),
      {
        name: 'commitments',
        start: (startAfter) => commitments.seed(db, startAfter),
        event: (e) => commitments.observe(e),
        replaced: () => commitments.reset(),
        stop: () => commitments.close(),
      },
      {
        name: 'accounts',
        start: () => accounts.start(),
        event: (e, fill) => accounts.onEvent(e, fill),
        snapshot: (sub) => later(accounts.snapshot(sub)),
        subscriptionChanged: (before, after) => accounts.subscriptionChanged(before, after),
        replaced: () => accounts.reset(),
        stop: () => accounts.stop(),
      },
      user,
      clientOrders,
      {
        name: 'trade-tape',
        // The tape up to where the stream starts, read beside the live path (recent-trades.ts): nothing waits for it.
        start: (startAfter) => {
          if (startAfter === null || !db.configured) return;
          trades.seed(() => tradesFromDatabase(db, startAfter)).catch((err: unknown) => {
            logger.warn({ err: (err as Error).message }, 'stream: trade tape not seeded from the database');
          });
        },
        frame: (f) => trades.observe(f),
        snapshot: (sub) => ({ frames: trades.snapshot(sub) }),
        replaced: () => trades.reset(),
      },
      new OpenInterestFeed({
        readSeed: db.configured ? () => db.readSnapshot({ asOfSeq: null, longs: [] }, loadOpenInterestSeed) : null,
        publish: context.publish,
        head: context.head,
        logger,
        clock,
      }),
      {
        name: 'books',
        event: (e) => books.event(e),
        endOfBatch: () => books.endOfBatch(),
        snapshot: (sub) => ({ frames: books.snapshot(sub) }),
        markets: (known) => books.markets(known),
        subscriptionChanged: (before, after) => books.ticks.changed(before, after),
        polled: (book, depth) => books.polled(book, depth),
        replaced: (head) => books.reset(head),
        stop: () => books.stop(),
      },
    ];
    return {
      features,
      startPoint: (replayFrom) => core.startPoint(replayFrom),
      queries: {
        accounts,
        books,
        commitmentStatus: () => commitments.status(),
        orderOutcome: (orderId, waitMs) => user.outcome(orderId, waitMs),
        clientOrder: (party, clientOrderId) => clientOrders.get(party, clientOrderId),
      },
    };
  };
}

function later(frames: Promise<Frame[]> | null): FeatureSnapshot {
  return { frames: [], later: frames };
}
