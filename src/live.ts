// The live runtime: source → features → hub. The source (src/live-source.ts) delivers the engine's
// history in batches; each batch runs through the features in list order (src/live-features.ts,
// the stream's own projections first; stream/feature-list.ts calls their hooks) and leaves for each
// client in one write. Implements the LiveView the HTTP edge reads (the features' answers through
// stream/feature-answers.ts, the status through stream/live-status.ts). Without ENGINE_ADMIN_TOKEN
// nothing starts and the hub is disabled (clients connect and receive nothing, docs/stream.md rule 2).
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import { systemClock, type Clock } from './contracts/clock.js';
import { OrderbookPoller } from './engine/orderbook-poller.js';
import { asFill } from './projections/fill.js';
import type { EngineEventSink, EngineEventSource } from './contracts/engine-event-source.js';
import type { EngineEvent } from './contracts/engine-event.js';
import type { Frame } from './contracts/frame.js';
import { inboundLimits } from './stream/inbound-limit.js';
import { EpochTracker } from './stream/epoch-tracker.js';
import { epochSources } from './stream/epoch-sources.js';
import type { StreamFanout } from './stream/fanout.js';
import { StreamHub } from './stream/hub.js';
import type { LiveFeatureQueries, LiveStatus, LiveView } from './stream/live-view.js';
import { liveStatus } from './stream/live-status.js';
import { FeatureAnswers } from './stream/feature-answers.js';
import { FeatureList } from './stream/feature-list.js';
import type { ComposeLiveFeatures, LiveComposition } from './stream/live-composition.js';
import { LagNotice } from './stream/lag-notice.js';
import { StreamMetrics } from './stream/metrics.js';

export interface LiveDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  /** The runtime's timers (the order book polls, the lag notices); default systemClock. */
  clock?: Clock;
  /** The live features, listed once (src/live-features.ts). */
  features: ComposeLiveFeatures;
  /** The transport of the engine's history (src/live-source.ts), given the runtime's sink. */
  source: (sink: EngineEventSink) => EngineEventSource;
}

export class LiveRuntime extends FeatureAnswers implements LiveView {
  readonly hub: StreamFanout;
  readonly streamMetrics: StreamMetrics;
  readonly source: EngineEventSource;
  poller: OrderbookPoller | null = null;
  private lagNotice: LagNotice | null = null;
  private started = false;
  private readonly clock: Clock;
  private readonly epochs: EpochTracker;
  private readonly composed: LiveComposition;
  private readonly features: FeatureList;
  /** The seq of the event the features are being given (null between batches). */
  private current: number | null = null;
  /** The one path engine events take into the stream, whatever their source. */
  readonly sink: EngineEventSink = {
    events: (batch) => this.deliver(batch),
    skipped: (seq, from) => (from === undefined ? this.hub.markCoveredAfter(seq) : this.hub.announceGap(from, seq)),
    replaced: (head) => this.onHistoryReplaced(head),
  };

  constructor(private readonly deps: LiveDeps) {
    super();
    const { config, db, engine } = deps;
    this.clock = deps.clock ?? systemClock;
    this.streamMetrics = StreamMetrics.for(deps.metrics.registry);
    this.epochs = new EpochTracker({ sources: (options) => epochSources(db, engine, this.source, options), logger: deps.logger });
    // Made here, not in start(): clients may connect before the runtime starts (main.ts listens first).
    this.source = deps.source(this.sink);
    this.hub = new StreamHub({
      bufferBytes: config.wsClientBufferBytes,
      pingMs: config.wsPingMs,
      historySize: config.wsHistorySize,
      metrics: this.streamMetrics,
      logger: deps.logger,
      inbound: inboundLimits(config),
      deflate: config.wsDeflate ? { thresholdBytes: config.wsDeflateThresholdBytes } : null,
      watch: (before, after) => this.features.each('subscriptionChanged', (f) => f.subscriptionChanged?.(before, after)),
      clock: this.clock,
      enabled: this.enabled,
      state: {
        epoch: () => this.epochs.current,
        // A replica's connections wait for its catch-up, so the events it replays to fill its history never reach a client as live frames.
        ready: () => this.epochs.current !== null && this.source.ready,
        whenReady: () => Promise.all([this.epochs.known(), this.source.whenReady()]).then(() => undefined),
        head: () => this.head(),
        snapshot: (sub) => this.features.snapshot(sub),
      },
    });
    this.composed = deps.features({ publish: (f) => this.publish(f), head: () => this.head() });
    this.features = new FeatureList(this.composed.features, deps.logger);
  }

  private head(): number | null {
    return this.current ?? this.source.position;
  }

  get queries(): LiveFeatureQueries {
    return this.composed.queries;
  }

  /** The identity of the engine history being streamed (null until derived). */
  get epoch(): string | null {
    return this.epochs.current;
  }

  get enabled(): boolean {
    return this.deps.config.engineAdminToken !== null;
  }

  protected get running(): boolean {
    return this.enabled && this.started;
  }

  /** The engine's active markets (rule 1 of the stream filters), null until known. */
  knownMarkets(): ReadonlySet<string> | null {
    return this.poller?.knownMarkets ?? null;
  }

  async start(): Promise<void> {
    if (this.started || !this.enabled) return;
    this.started = true;
    const { config, logger, engine } = this.deps;
    const startAfter = await this.composed.startPoint(await this.source.replayStart(config.wsHistorySize));
    if (startAfter !== null) this.hub.markCoveredAfter(startAfter);
    await this.features.each('start', (f) => f.start?.(startAfter));
    this.epochs.set(await this.epochs.derive({ store: true }));
    this.source.start(startAfter);
    if (this.source.lag() !== undefined) {
      this.lagNotice = new LagNotice({ lag: () => this.source.lag(), head: () => this.source.position, announce: (m) => this.hub.announceControl(m), clock: this.clock });
      this.lagNotice.start();
    }
    this.poller = new OrderbookPoller({
      engine,
      depth: config.wsOrderbookDepth,
      pollMs: config.wsOrderbookPollMs,
      onFrame: (f) => this.publish(f),
      onBook: (book, depth) => void this.features.each('polled', (f) => f.polled?.(book, depth)),
      // Rule 1 is judged again for the connections already open whenever the market list loads or changes.
      onMarkets: (known) => {
        this.hub.setKnownMarkets(known);
        void this.features.each('markets', (f) => f.markets?.(known));
      },
      logger,
      clock: this.clock,
    });
    this.poller.start();
  }

  /**
   * One batch of the source: each event, in seq order, reaches every feature in list order (each
   * one's frames published before the next feature is called), then every feature's endOfBatch;
   * the batch's frames leave for each client in one write.
   */
  private deliver(batch: readonly EngineEvent[]): void {
    this.hub.beginBatch();
    try {
      for (const event of batch) {
        this.current = event.seq;
        this.epochs.observe(event, () => this.hub.epochChanged());
        this.features.event(event, asFill(event), (frames) => this.publishAll(frames));
      }
      this.features.endOfBatch();
    } finally {
      this.current = null;
      this.hub.endBatch();
    }
  }

  /** Publishes on the hub, then tells every feature (the contract's `frame`). */
  private publish(frame: Frame): number {
    const n = this.hub.publish(frame);
    this.features.frame(frame);
    return n;
  }

  private publishAll(frames: readonly Frame[]): void {
    this.hub.publishAll(frames);
    for (const f of frames) this.features.frame(f);
  }

  /**
   * The engine's history was replaced; the source resumes after `head` of the new one once this
   * resolves. Nothing of the old history survives: every feature is told (in list order), the
   * poller sends every book again, the replay history restarts and every connection is told.
   */
  private async onHistoryReplaced(head: number): Promise<void> {
    const previous = this.epochs.current;
    const epoch = await this.epochs.derive({ store: false });
    this.features.replaced(head);
    this.poller?.forget();
    this.epochs.set(epoch);
    this.hub.announceReset(previous, head);
    this.deps.logger.warn({ epoch, previousEpoch: previous, head }, 'stream: engine history replaced; clients told to reset');
  }

  /** Stops the engine side. Clients are closed (1001) by the stream plugin when the app closes. */
  async stop(): Promise<void> {
    this.lagNotice?.stop();
    await Promise.all([this.source.stop(), this.poller?.stop()]);
    await this.features.each('stop', (f) => f.stop?.());
  }

  /** A runtime that was never started reports itself disabled (nothing to be ready for). */
  status(): LiveStatus {
    return liveStatus(this.source, this.running);
  }
}
