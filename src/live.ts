// The live runtime: engine admin SSE → projections → hub, plus the order book poller. Implements
// the LiveStatusSource that /readyz reads.
//
// The stream's epoch (the identity of the engine history, src/stream/epoch.ts) is derived before
// the source starts; connections that arrive earlier wait for it.
//
// When the source finds the engine's history replaced (the sink's `replaced`, src/contracts/engine-event-source.ts), before anything of the
// new history is delivered: the epoch is derived again, the projections and the snapshot state are
// emptied (nothing of the old history survives), the order book poller sends every book again, the
// replay history is cleared, and the hub tells every connection (stream.reset, or close 4011);
// /readyz reports the discontinuity.
//
// Without ENGINE_ADMIN_TOKEN nothing starts: no SSE connection, no order book polls, and the hub
// is disabled (clients connect and receive nothing, docs/stream.md rule 2).
//
// Where the stream starts: after the newest seq of the indexer's `events` table when the database
// answers (the engine replays from there, so the gap between the mirror and the live head is not
// lost, and the candles rebuilt from `fills` up to that seq continue exactly); otherwise live only,
// from the engine's head, with empty candle buckets.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import { OrderbookPoller } from './engine/orderbook-poller.js';
import { readFirstEngineEvent } from './engine/first-event.js';
import type { EngineEventListener, EngineEventSink, EngineEventSource } from './contracts/engine-event-source.js';
import { SseBridge } from './engine/sse-bridge.js';
import { inboundLimits } from './stream/inbound-limit.js';
import { JetStreamSource } from './fleet/jetstream-source.js';
import { loadCandleSeed } from './db/queries/candles.js';
import { seedCandles } from './projections/candles.js';
import { initialProjectionState, project, type ProjectionState } from './projections/index.js';
import type { EngineEvent } from './contracts/engine-event.js';
import type { Frame } from './contracts/frame.js';
import type { EpochSources } from './stream/epoch.js';
import { EpochTracker } from './stream/epoch-tracker.js';
import { eventStore } from './stream/event-store.js';
import type { StreamFanout } from './stream/fanout.js';
import { StreamHub } from './stream/hub.js';
import type { LiveStatus, LiveView } from './stream/live-view.js';
import { LagNotice } from './stream/lag-notice.js';
import { StreamMetrics } from './stream/metrics.js';
import { LiveState, partyStore } from './stream/snapshot.js';
import { BookStream } from './stream/book-stream.js';
import { UserOrders } from './projections/user-orders.js';
import { UserChannels } from './stream/user-snapshot.js';
import { RecentTrades, tradesFromDatabase } from './stream/recent-trades.js';
import { OrderOutcomes } from './stream/order-outcomes.js';
import { fetchLiveOrders } from './http/reads/live-orders.js';
import { listFills } from './db/queries/fills.js';
import { EMPTY_PAGE } from './db/queries/page.js';
import { parseBook } from './engine/orderbook-poller.js';
import { LiveCommitments } from './commitments/live-commitments.js';
import type { CommitmentStatus } from './commitments/monitor.js';
import { AccountBook, withAccounts } from './stream/account-book.js';
import type { Subscription } from './stream/subscription.js';

/** How long the engine may take to replay its first event for the epoch. */
const FIRST_EVENT_MS = 5_000;

export interface LiveDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  /** Followers of the engine's history beside the projections (the session keys: auth/session-learning.ts). */
  listeners: readonly EngineEventListener[];
}

export class LiveRuntime implements LiveView {
  readonly hub: StreamFanout;
  readonly streamMetrics: StreamMetrics;
  /** The engine's events: its SSE directly (SseBridge), or the fleet's JetStream stream (NATS_URL); null until started. */
  source: EngineEventSource | null = null;
  /** With NATS_URL: the JetStream source, known before it starts (the epoch and the start point are read from it). */
  private jetstream: JetStreamSource | null = null;
  /**
   * With NATS_URL: settles once the source has caught up with the stream's head at start. New
   * connections wait for it, so the events a replica replays from the stream to fill its history
   * never reach a client as live frames.
   */
  private caughtUp: Promise<void> | null = null;
  private releaseCaughtUp: () => void = () => {};
  /** The catch-up is done (always, without NATS_URL). */
  private caughtUpDone = true;
  private catchUpCheck: NodeJS.Timeout | null = null;
  /** With NATS_URL: stream.lagging to control connections while this replica is behind the engine. */
  private lagNotice: LagNotice | null = null;
  poller: OrderbookPoller | null = null;
  private state: ProjectionState = initialProjectionState();
  private started = false;
  private readonly epochs: EpochTracker;
  readonly liveState: LiveState;
  /** Order books kept from the events: orderbook.delta and the delta connections' snapshots. */
  readonly books: BookStream;
  /** order.update and fill frames (user channels) and their state on subscribe. */
  private readonly userOrders = new UserOrders();
  readonly userChannels: UserChannels;
  /** The last trades per market, sent on subscribe to `trade`. */
  private readonly recentTrades = new RecentTrades();
  /** Cancel reasons by order id, for the place-order answer. */
  private readonly outcomes = new OrderOutcomes();
  /** The engine's commitments recomputed from the events (docs/verification.md). */
  readonly commitments: LiveCommitments;
  /** The accounts (docs/account.md): fed by every event, completed from the database on demand. */
  readonly accounts: AccountBook;
  /** The one path engine events take into the stream, whatever their source. */
  readonly sink: EngineEventSink = {
    event: (e) => this.onEvent(e),
    // The book deltas of a batch are made once, at its end, inside the hub's batch (one write per client).
    batch: (deliver) => this.hub.batched(() => this.books.batch(deliver)),
    skipped: (seq) => this.hub.markCoveredAfter(seq),
    replaced: (head) => this.onHistoryReplaced(head),
  };

  constructor(private readonly deps: LiveDeps) {
    const { config } = deps;
    this.liveState = new LiveState({
      candles: () => this.state.candles,
      head: () => this.source?.position ?? null,
      store: partyStore(deps.db),
      logger: deps.logger,
    });
    this.accounts = new AccountBook({
      db: deps.db,
      logger: deps.logger,
      idleMs: config.accountIdleMs,
      maxReadParties: config.accountReadPartiesMax,
      registry: deps.metrics.registry,
    });
    this.streamMetrics = StreamMetrics.for(deps.metrics.registry);
    this.commitments = new LiveCommitments(deps.metrics.registry, deps.logger);
    this.epochs = new EpochTracker({ sources: (options) => this.epochSources(options), logger: deps.logger });
    // Made here, not in start(): clients may connect before the runtime starts (main.ts listens first).
    if (config.natsUrl) {
      this.caughtUpDone = false;
      this.caughtUp = new Promise<void>((resolve) => (this.releaseCaughtUp = resolve));
    }
    const hubOptions = {
      bufferBytes: config.wsClientBufferBytes,
      pingMs: config.wsPingMs,
      historySize: config.wsHistorySize,
      metrics: this.streamMetrics,
      logger: deps.logger,
      inbound: inboundLimits(config),
      // The account book holds the parties connections ask account.update for (docs/account.md).
      watch: (before: Subscription | null, after: Subscription | null) => this.accounts.subscriptionChanged(before, after),
    };
    this.hub = new StreamHub({
      ...hubOptions,
      enabled: config.engineAdminToken !== null,
      state: {
        epoch: () => this.epochs.current,
        ready: () => this.epochs.current !== null && this.caughtUpDone,
        whenReady: () => this.readyToServe(),
        head: () => this.source?.position ?? null,
        snapshot: (sub) => {
          const parts = withAccounts(this.liveState.build(sub), this.accounts.snapshot(sub));
          const user = this.userChannels.snapshot(sub);
          const later = parts.later && user ? Promise.all([parts.later, user]).then(([a, b]) => [...a, ...b]) : (parts.later ?? user);
          return { frames: [...parts.frames, ...this.recentTrades.snapshot(sub), ...this.books.snapshot(sub)], later };
        },
      },
    });
    this.userChannels = new UserChannels({
      orders: this.userOrders,
      liveOrders: async (party) => {
        const r = await fetchLiveOrders(deps.engine, party, undefined, 2_000);
        return r.ok ? r.orders : null;
      },
      lastFills: async (party, n) => {
        if (!deps.db.configured) return null;
        try {
          return (await deps.db.read(EMPTY_PAGE, (sql) => listFills(sql, { party, limit: n }))).items;
        } catch {
          return null;
        }
      },
      head: () => this.source?.position ?? null,
      logger: deps.logger,
    });
    this.books = new BookStream({
      readBook: async (market, depth) => parseBook(await deps.engine.getJson<unknown>(`/v1/orderbook?depth=${depth}&market=${encodeURIComponent(market)}`)),
      publish: (f) => this.hub.publish(f),
      registry: deps.metrics.registry,
      logger: deps.logger,
    });
  }

  private markCaughtUp(): void {
    if (this.catchUpCheck) clearInterval(this.catchUpCheck);
    this.catchUpCheck = null;
    this.caughtUpDone = true;
    this.releaseCaughtUp();
  }

  /** Settles when the epoch is known (and, with JetStream, the start-up catch-up is done). */
  private readyToServe(): Promise<void> {
    const epoch = this.epochs.known();
    return this.caughtUp ? Promise.all([epoch, this.caughtUp]).then(() => undefined) : epoch;
  }

  /** The identity of the engine history being streamed (null until derived). */
  get epoch(): string | null {
    return this.epochs.current;
  }

  /** Where the epoch reads seq 1 and the head: `store: false` after a replacement (the mirror may hold the old history). */
  private epochSources(options: { store: boolean }): EpochSources {
    const { config, db, engine } = this.deps;
    const url = this.streamUrl();
    const store = eventStore(db);
    return {
      engineHead: async () => {
        const h = await engine.health(2_000);
        return typeof h.maxSeq === 'number' ? h.maxSeq : null;
      },
      // A fleet replica reads seq 1 from the JetStream stream: the engine serves the relay alone.
      engineFirst: () => (this.jetstream ? this.jetstream.firstEvent(FIRST_EVENT_MS) : readFirstEngineEvent(url, config.engineAdminToken!, FIRST_EVENT_MS)),
      storeFirst: async () => {
        if (!store || !options.store) return null;
        const [first] = await db.withDeadline(() => store(0, 1));
        return first ?? null;
      },
    };
  }

  private streamUrl(): string {
    const url = new URL(this.deps.config.engineBaseUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/admin/events/stream`;
    return url.toString();
  }

  get enabled(): boolean {
    return this.deps.config.engineAdminToken !== null;
  }

  /** The engine's active markets (rule 1 of the stream filters), null until known. */
  knownMarkets(): ReadonlySet<string> | null {
    return this.poller?.knownMarkets ?? null;
  }

  async start(): Promise<void> {
    const token = this.deps.config.engineAdminToken;
    if (this.started || token === null) return;
    this.started = true;
    const { config, logger, db, engine } = this.deps;

    // With JetStream, start before the stream's head so the replay history is filled from the
    // stream (a replica started a second ago replays like an old one): the candles are rebuilt
    // from the database up to that point, and the stream's events after it are projected as live.
    const jetstream = config.natsUrl ? this.jetStreamSource() : null;
    this.jetstream = jetstream;
    const bounds = jetstream ? await jetstream.bounds() : null;
    const prefillFrom = bounds ? Math.max(bounds.firstEngineSeq - 1, bounds.lastEngineSeq - config.wsHistorySize) : null;

    let startAfter: number | null = null;
    if (db.configured) {
      try {
        const seed = await loadCandleSeed(db, undefined, prefillFrom);
        startAfter = seed.maxSeq;
        if (seed.nowMs !== null) this.state = initialProjectionState(seedCandles(seed.trades, seed.nowMs));
        if (seed.truncated) logger.warn('candle rebuild read its row limit: older matches of the day are missing from 4h/1d bars');
        logger.info({ startAfter, matches: seed.trades.length }, 'stream: candles rebuilt from the database');
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'stream: database unavailable at start; streaming live from the engine head');
      }
    }
    if (startAfter === null && prefillFrom !== null) startAfter = prefillFrom;
    if (startAfter !== null) this.hub.markCoveredAfter(startAfter);
    this.liveState.coveredAfter = startAfter;
    await this.commitments.seed(db, startAfter);
    this.epochs.set(await this.epochs.derive({ store: true }));

    if (jetstream) {
      jetstream.startAfter(startAfter);
      this.source = jetstream;
      this.catchUpCheck = setInterval(() => {
        if (jetstream.caughtUp) this.markCaughtUp();
      }, 25);
      this.catchUpCheck.unref();
      this.lagNotice = new LagNotice({ lag: () => jetstream.lagStatus(), head: () => jetstream.position, announce: (m) => this.hub.announceControl(m) });
      this.lagNotice.start();
    } else {
      this.source = new SseBridge({
        url: this.streamUrl(),
        token,
        idleMs: config.sseIdleMs,
        maxEventBytes: config.sseMaxEventBytes,
        startAfter,
        sink: this.sink,
        fillFrom: eventStore(db),
        engineHead: async () => {
          const h = await engine.health(2_000);
          return typeof h.maxSeq === 'number' ? h.maxSeq : null;
        },
        logger,
        metrics: this.sourceMetrics(),
      });
    }
    this.source.start();
    this.accounts.start();
    // The trade tape up to where the stream starts, read beside the live path (recent-trades.ts).
    if (startAfter !== null && db.configured) {
      this.recentTrades.seed(() => tradesFromDatabase(db, startAfter)).catch((err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'stream: trade tape not seeded from the database');
      });
    }

    this.poller = new OrderbookPoller({
      engine,
      depth: config.wsOrderbookDepth,
      pollMs: config.wsOrderbookPollMs,
      onFrame: (f) => {
        this.liveState.observe(f);
        this.hub.publish(f);
      },
      onBook: (book, depth) => this.books.polled(book, depth),
      // Rule 1 is judged again for the connections already open whenever the market list loads or changes.
      onMarkets: (known) => {
        this.hub.setKnownMarkets(known);
        this.books.markets(known);
      },
      logger,
    });
    this.poller.start();
  }

  private sourceMetrics() {
    return {
      reconnects: this.streamMetrics.sseReconnects,
      lagSeconds: this.streamMetrics.sseLag,
      maxSeq: this.deps.metrics.engineMaxSeq,
      events: this.streamMetrics.sseEvents,
      oversized: this.streamMetrics.sseOversized,
    };
  }

  private jetStreamSource(): JetStreamSource {
    const { config, db, logger } = this.deps;
    return new JetStreamSource({
      url: config.natsUrl!,
      stream: config.natsStream,
      subject: config.natsSubject,
      startAfter: null,
      prefill: config.wsHistorySize,
      sink: this.sink,
      fillFrom: eventStore(db),
      logger,
      metrics: this.sourceMetrics(),
      engineHead: async () => (await this.deps.engine.health(1_500)).maxSeq ?? null,
      behindMaxS: config.streamBehindMaxS,
    });
  }

  /** Each engine event, in seq order, once (the sink's guarantees): the listeners, then the projections. */
  private onEvent(event: EngineEvent): void {
    for (const listener of this.deps.listeners) {
      try {
        listener.event(event);
      } catch (err) {
        this.deps.logger.error({ err, seq: event.seq, kind: event.kind }, 'engine event listener failed');
      }
    }
    // A replica goes live with the first event after the head its stream had at start, before that
    // event's frames are published (catch-up frames before it are never live for anyone).
    if (!this.caughtUpDone && this.jetstream?.isLive(event.seq)) this.markCaughtUp();
    if (this.liveState.coveredAfter === null) this.liveState.coveredAfter = event.seq - 1;
    this.epochs.observe(event, () => this.hub.epochChanged());
    this.commitments.observe(event);
    const { state, frames } = project(this.state, event);
    this.state = state;
    for (const f of frames) this.observe(f);
    frames.push(...this.accounts.onEvent(event));
    this.hub.publishAll(frames);
    const user = this.userOrders.apply(event);
    for (const f of user) {
      this.userChannels.observe(f);
      this.outcomes.observe(f);
    }
    this.hub.publishAll(user);
    this.books.event(event);
    // ... and at the latest once the head's own event is published (no later event can come first).
    if (!this.caughtUpDone && this.jetstream?.caughtUp) this.markCaughtUp();
  }

  private observe(f: Frame): void {
    if (f.kind === 'position.update' || f.kind === 'balance.update') this.liveState.observe(f);
    else if (f.kind === 'trade') this.recentTrades.observe(f);
  }

  /**
   * The engine's history was replaced; the source resumes after `head` of the new one once this
   * resolves. Nothing of the old history survives: projections, snapshot state, books, replay,
   * and the listeners are told.
   */
  private async onHistoryReplaced(head: number): Promise<void> {
    const previous = this.epochs.current;
    const epoch = await this.epochs.derive({ store: false });
    this.state = initialProjectionState();
    this.commitments.reset();
    this.liveState.reset(head);
    this.accounts.reset();
    this.poller?.forget();
    this.books.reset();
    this.userOrders.clear();
    this.userChannels.reset();
    this.recentTrades.reset();
    for (const listener of this.deps.listeners) {
      try {
        listener.replaced?.(head);
      } catch (err) {
        this.deps.logger.error({ err }, 'engine event listener failed to reset');
      }
    }
    this.epochs.set(epoch);
    this.hub.announceReset(previous, head);
    this.deps.logger.warn({ epoch, previousEpoch: previous, head }, 'stream: engine history replaced; clients told to reset');
  }

  orderOutcome(orderId: string, waitMs: number): Promise<string | null> {
    if (!this.enabled || !this.started) return Promise.resolve(null);
    return this.outcomes.reason(orderId, waitMs);
  }

  /** Stops the engine side. Clients are closed (1001) by the stream plugin when the app closes. */
  async stop(): Promise<void> {
    this.markCaughtUp(); // nothing more will come: connections still waiting are released (and closed with the app)
    this.lagNotice?.stop();
    this.books.stop();
    this.accounts.stop();
    await Promise.all([this.source?.stop(), this.poller?.stop()]);
    await this.commitments.close();
  }

  commitmentStatus(): CommitmentStatus | null {
    return this.enabled ? this.commitments.status() : null;
  }

  /** A runtime that was never started reports itself disabled (nothing to be ready for). */
  status(): LiveStatus {
    const enabled = this.enabled && this.started;
    const source = this.source;
    const gap = source?.gap;
    return {
      enabled,
      connected: source?.connected ?? false,
      maxSeq: source?.position ?? null,
      ...(gap ? { gap } : {}),
      // Named only for JetStream, so the single-gateway /readyz keeps its shape.
      ...(this.deps.config.natsUrl ? { source: 'jetstream' as const } : {}),
      ...(enabled && this.jetstream ? { lag: this.jetstream.lagStatus() } : {}),
    };
  }
}
