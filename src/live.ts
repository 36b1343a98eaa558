// The live runtime: source → features → hub. The source (src/live-source.ts) delivers the engine's
// history in batches; each batch runs through the features in list order (src/live-features.ts,
// the stream's own projections first) and leaves for each client in one write. Implements the
// LiveStatusSource that /readyz reads. Without ENGINE_ADMIN_TOKEN nothing starts and the hub is
// disabled (clients connect and receive nothing, docs/stream.md rule 2).
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import { OrderbookPoller } from './engine/orderbook-poller.js';
import { engineHead } from './engine/engine-head.js';
import { asFill } from './projections/fill.js';
import type { EngineEventSink, EngineEventSource } from './contracts/engine-event-source.js';
import type { LiveFeature } from './contracts/live-feature.js';
import { inboundLimits } from './stream/inbound-limit.js';
import type { EngineEvent } from './contracts/engine-event.js';
import type { Frame } from './contracts/frame.js';
import { EpochTracker } from './stream/epoch-tracker.js';
import { eventStore } from './stream/event-store.js';
import type { StreamFanout } from './stream/fanout.js';
import { StreamHub } from './stream/hub.js';
import type { LiveFeatureQueries, LiveStatus, LiveView } from './stream/live-view.js';
import type { ClientOrderState } from './stream/client-orders.js';
import { LagNotice } from './stream/lag-notice.js';
import type { CommitmentStatus } from './contracts/commitment-status.js';
import type { BookViewSpec } from './stream/book-views.js';
import type { AccountBook } from './stream/account-book.js';
import { StreamMetrics } from './stream/metrics.js';
import type { Subscription } from './stream/subscription.js';

/** What the runtime gives the features it is composed with. */
export interface LiveContext {
  /** Publishes a frame on the hub (and to every feature's `frame`); the number of recipients. */
  publish(frame: Frame): number;
  /** The seq of the event being delivered, else the source's position; null while live-only and empty. */
  head(): number | null;
}

/** The features, in the order events reach them, what the HTTP edge may ask of them, and where the stream starts. */
export interface LiveComposition {
  readonly features: readonly LiveFeature<Subscription>[];
  readonly queries: LiveFeatureQueries;
  /** The seq to start after, given where the source could replay from (null: live from the engine's head). */
  startPoint(replayFrom: number | null): Promise<number | null>;
}

export type ComposeLiveFeatures = (context: LiveContext) => LiveComposition;

/** How long the engine may take to replay its first event for the epoch. */
const FIRST_EVENT_MS = 5_000;

export interface LiveDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  /** The live features, listed once (src/live-features.ts). */
  features: ComposeLiveFeatures;
  /** The transport of the engine's history (src/live-source.ts), given the runtime's sink. */
  source: (sink: EngineEventSink) => EngineEventSource;
}

export class LiveRuntime implements LiveView {
  readonly hub: StreamFanout;
  readonly streamMetrics: StreamMetrics;
  readonly source: EngineEventSource;
  poller: OrderbookPoller | null = null;
  private lagNotice: LagNotice | null = null;
  private started = false;
  private readonly epochs: EpochTracker;
  private readonly composed: LiveComposition;
  /** The features with a `frame` hook, found once: every published frame walks only these. */
  private readonly frameFollowers: readonly LiveFeature<Subscription>[];
  /** The features with an `endOfBatch` hook, found once (in list order). */
  private readonly batchEnders: readonly LiveFeature<Subscription>[];
  /** The seq of the event the features are being given (null between batches). */
  private current: number | null = null;
  /** The one path engine events take into the stream, whatever their source. */
  readonly sink: EngineEventSink = {
    events: (batch) => this.deliver(batch),
    skipped: (seq, from) => (from === undefined ? this.hub.markCoveredAfter(seq) : this.hub.announceGap(from, seq)),
    replaced: (head) => this.onHistoryReplaced(head),
  };

  constructor(private readonly deps: LiveDeps) {
    const { config } = deps;
    this.streamMetrics = StreamMetrics.for(deps.metrics.registry);
    this.epochs = new EpochTracker({ sources: (options) => this.epochSources(options), logger: deps.logger });
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
      watch: (before, after) => this.each('subscriptionChanged', (f) => f.subscriptionChanged?.(before, after)),
      enabled: this.enabled,
      state: {
        epoch: () => this.epochs.current,
        // A replica's connections wait for its catch-up, so the events it replays to fill its history never reach a client as live frames.
        ready: () => this.epochs.current !== null && this.source.ready,
        whenReady: () => Promise.all([this.epochs.known(), this.source.whenReady()]).then(() => undefined),
        head: () => this.head(),
        snapshot: (sub) => this.snapshot(sub),
      },
    });
    this.composed = deps.features({ publish: (f) => this.publish(f), head: () => this.head() });
    this.frameFollowers = this.composed.features.filter((f) => f.frame !== undefined);
    this.batchEnders = this.composed.features.filter((f) => f.endOfBatch !== undefined);
  }

  private head(): number | null {
    return this.current ?? this.source.position;
  }

  get queries(): LiveFeatureQueries {
    return this.composed.queries;
  }

  /** The accounts (docs/account.md), when a feature keeps them. */
  get accounts(): AccountBook | undefined {
    return this.queries.accounts;
  }

  /** The bound on distinct `tick:` book groupings, when the books feature keeps them. */
  admitBookView(spec: BookViewSpec | null): void {
    this.queries.books?.ticks.admit(spec);
  }

  /** The identity of the engine history being streamed (null until derived). */
  get epoch(): string | null {
    return this.epochs.current;
  }

  get enabled(): boolean {
    return this.deps.config.engineAdminToken !== null;
  }

  /** The engine's active markets (rule 1 of the stream filters), null until known. */
  knownMarkets(): ReadonlySet<string> | null {
    return this.poller?.knownMarkets ?? null;
  }

  /** Where the epoch reads seq 1 and the head: `store: false` after a replacement (the mirror may hold the old history). */
  private epochSources(options: { store: boolean }) {
    const store = eventStore(this.deps.db);
    return {
      engineHead: () => engineHead(this.deps.engine, 2_000),
      engineFirst: () => this.source.firstEvent(FIRST_EVENT_MS),
      storeFirst: async () => {
        if (!store || !options.store) return null;
        const [first] = await this.deps.db.withDeadline(() => store(0, 1));
        return first ?? null;
      },
    };
  }

  async start(): Promise<void> {
    if (this.started || !this.enabled) return;
    this.started = true;
    const { config, logger, engine } = this.deps;
    const startAfter = await this.composed.startPoint(await this.source.replayStart(config.wsHistorySize));
    if (startAfter !== null) this.hub.markCoveredAfter(startAfter);
    await this.each('start', (f) => f.start?.(startAfter));
    this.epochs.set(await this.epochs.derive({ store: true }));
    this.source.start(startAfter);
    if (this.source.lag() !== undefined) {
      this.lagNotice = new LagNotice({ lag: () => this.source.lag(), head: () => this.source.position, announce: (m) => this.hub.announceControl(m) });
      this.lagNotice.start();
    }
    this.poller = new OrderbookPoller({
      engine,
      depth: config.wsOrderbookDepth,
      pollMs: config.wsOrderbookPollMs,
      onFrame: (f) => this.publish(f),
      onBook: (book, depth) => void this.each('polled', (f) => f.polled?.(book, depth)),
      // Rule 1 is judged again for the connections already open whenever the market list loads or changes.
      onMarkets: (known) => {
        this.hub.setKnownMarkets(known);
        void this.each('markets', (f) => f.markets?.(known));
      },
      logger,
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
        const fill = asFill(event);
        for (const feature of this.composed.features) {
          if (!feature.event) continue;
          let out: readonly Frame[] | void;
          try {
            out = feature.event(event, fill);
          } catch (err) {
            this.deps.logger.error({ err, seq: event.seq, kind: event.kind, feature: feature.name }, 'live feature failed on an event');
            continue;
          }
          if (out && out.length > 0) this.publishAll(out);
        }
      }
      for (const feature of this.batchEnders) this.guard('endOfBatch', feature, () => feature.endOfBatch!());
    } finally {
      this.current = null;
      this.hub.endBatch();
    }
  }

  /** Publishes on the hub, then tells every feature (the contract's `frame`). */
  private publish(frame: Frame): number {
    const n = this.hub.publish(frame);
    this.tellFrame(frame);
    return n;
  }

  private publishAll(frames: readonly Frame[]): void {
    this.hub.publishAll(frames);
    for (const f of frames) this.tellFrame(f);
  }

  private tellFrame(frame: Frame): void {
    for (const feature of this.frameFollowers) this.guard('frame', feature, () => feature.frame!(frame), { seq: frame.seq, kind: frame.kind });
  }

  /** Runs one feature's hook; a throw is logged with the feature's name and the others still run. */
  private guard(what: string, feature: LiveFeature<Subscription>, hook: () => void, fields: object = {}): void {
    try {
      hook();
    } catch (err) {
      this.deps.logger.error({ err, feature: feature.name, ...fields }, `live feature failed: ${what}`);
    }
  }

  /** Calls `hook` for every feature in list order (awaited concurrently when it returns a promise); a failure is logged. */
  private async each(what: string, hook: (feature: LiveFeature<Subscription>) => void | Promise<void>): Promise<void> {
    await Promise.all(
      this.composed.features.map(async (feature) => {
        try {
          await hook(feature);
        } catch (err) {
          this.deps.logger.error({ err, feature: feature.name }, `live feature failed: ${what}`);
        }
      }),
    );
  }

  /** A connection's snapshot: each feature's part in list order (later parts in the same order). */
  private snapshot(sub: Subscription): { frames: Frame[]; later: Promise<Frame[]> | null } {
    const frames: Frame[] = [];
    const later: Array<Promise<readonly Frame[]>> = [];
    for (const feature of this.composed.features) {
      let part;
      try {
        part = feature.snapshot?.(sub);
      } catch (err) {
        this.deps.logger.error({ err, feature: feature.name }, 'live feature failed: snapshot');
        continue;
      }
      if (!part) continue;
      frames.push(...part.frames);
      if (part.later) later.push(part.later.catch(() => []));
    }
    return { frames, later: later.length === 0 ? null : Promise.all(later).then((parts) => parts.flat()) };
  }

  /**
   * The engine's history was replaced; the source resumes after `head` of the new one once this
   * resolves. Nothing of the old history survives: every feature is told (in list order), the
   * poller sends every book again, the replay history restarts and every connection is told.
   */
  private async onHistoryReplaced(head: number): Promise<void> {
    const previous = this.epochs.current;
    const epoch = await this.epochs.derive({ store: false });
    for (const feature of this.composed.features) this.guard('replaced', feature, () => feature.replaced?.(head));
    this.poller?.forget();
    this.epochs.set(epoch);
    this.hub.announceReset(previous, head);
    this.deps.logger.warn({ epoch, previousEpoch: previous, head }, 'stream: engine history replaced; clients told to reset');
  }

  orderOutcome(orderId: string, waitMs: number): Promise<string | null> {
    if (!this.enabled || !this.started) return Promise.resolve(null);
    return this.queries.orderOutcome(orderId, waitMs);
  }

  clientOrder(party: string, clientOrderId: string): ClientOrderState | null {
    return this.queries.clientOrder?.(party, clientOrderId) ?? null;
  }

  /** Stops the engine side. Clients are closed (1001) by the stream plugin when the app closes. */
  async stop(): Promise<void> {
    this.lagNotice?.stop();
    await Promise.all([this.source.stop(), this.poller?.stop()]);
    await this.each('stop', (f) => f.stop?.());
  }

  commitmentStatus(): CommitmentStatus | null {
    return this.enabled ? this.queries.commitmentStatus() : null;
  }

  /** A runtime that was never started reports itself disabled (nothing to be ready for). */
  status(): LiveStatus {
    const enabled = this.enabled && this.started;
    const { source } = this;
    const gap = source.gap;
    const lag = enabled ? source.lag() : undefined;
    return {
      enabled,
      connected: source.connected,
      maxSeq: source.position,
      caughtUp: enabled && source.ready,
      ...(gap ? { gap } : {}),
      // Named only for JetStream, so the single-gateway /readyz keeps its shape.
      ...(source.kind === 'sse' ? {} : { source: source.kind }),
      ...(lag ? { lag } : {}),
      // Behind past STREAM_BEHIND_MAX_S and not moving: what the replica probe judges (ADR 0126).
      ...(lag?.behind && lag.stalled ? { stalled: `${lag.events ?? 'unknown'} events behind the engine's head for ${Math.round(lag.seconds)} s, not moving` } : {}),
    };
  }
}
