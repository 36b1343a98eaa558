// The live runtime: engine admin SSE → projections → hub, plus the order book poller. Implements
// the LiveStatusSource that /readyz reads.
//
// If the engine's head is below the bridge's resume point (the engine restarted with a new
// history), the bridge resumes from the new head, the replay history is cleared, and /readyz
// reports the discontinuity (see sse-bridge.ts).
//
// Without ENGINE_ADMIN_TOKEN nothing starts: no SSE connection, no order book polls, and the hub
// is disabled (clients connect and receive nothing, spec §6 rule 2).
//
// Where the stream starts: after the newest seq of the indexer's `events` table when the database
// answers (the engine replays from there, so the gap between the mirror and the live head is not
// lost, and the candles rebuilt from `fills` up to that seq continue exactly); otherwise live only,
// from the engine's head, with empty candle buckets.
import type { FastifyBaseLogger } from 'fastify';
import type { SessionKeys } from './auth/session-keys.js';
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import { OrderbookPoller } from './engine/orderbook-poller.js';
import { SseBridge } from './engine/sse-bridge.js';
import { loadCandleSeed } from './db/queries/candles.js';
import { seedCandles } from './projections/candles.js';
import { initialProjectionState, project, type ProjectionState } from './projections/index.js';
import type { EngineEvent } from './projections/types.js';
import { eventStore } from './stream/event-store.js';
import type { StreamFanout } from './stream/fanout.js';
import { StreamHub } from './stream/hub.js';
import { StreamMetrics } from './stream/metrics.js';

/** What the live stream runtime reports to /readyz and /metrics. */
export interface LiveStatus {
  enabled: boolean;
  connected: boolean;
  maxSeq: number | null;
  gap?: string;
}

export interface LiveDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  sessions: SessionKeys;
}

export class LiveRuntime {
  readonly hub: StreamFanout;
  readonly streamMetrics: StreamMetrics;
  bridge: SseBridge | null = null;
  poller: OrderbookPoller | null = null;
  private state: ProjectionState = initialProjectionState();
  private started = false;

  constructor(private readonly deps: LiveDeps) {
    const { config } = deps;
    this.streamMetrics = StreamMetrics.for(deps.metrics.registry);
    const hubOptions = {
      bufferBytes: config.wsClientBufferBytes,
      pingMs: config.wsPingMs,
      historySize: config.wsHistorySize,
      metrics: this.streamMetrics,
      logger: deps.logger,
    };
    this.hub = new StreamHub({ ...hubOptions, enabled: config.engineAdminToken !== null });
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
    const { config, logger, db, engine, metrics } = this.deps;

    let startAfter: number | null = null;
    if (db.sql) {
      try {
        const seed = await loadCandleSeed(db.sql);
        startAfter = seed.maxSeq;
        if (seed.nowMs !== null) this.state = initialProjectionState(seedCandles(seed.trades, seed.nowMs));
        if (seed.truncated) logger.warn('candle rebuild read its row limit: older matches of the day are missing from 4h/1d bars');
        logger.info({ startAfter, matches: seed.trades.length }, 'stream: candles rebuilt from the database');
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'stream: database unavailable at start; streaming live from the engine head');
      }
    }
    if (startAfter !== null) this.hub.markCoveredAfter(startAfter);

    const url = new URL(config.engineBaseUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/admin/events/stream`;
    this.bridge = new SseBridge({
      url: url.toString(),
      token,
      idleMs: config.sseIdleMs,
      startAfter,
      onEvent: (e) => this.onEvent(e),
      batch: (deliver) => this.hub.batched(deliver),
      fillFrom: eventStore(db),
      engineHead: async () => {
        const h = await engine.health(2_000);
        return typeof h.maxSeq === 'number' ? h.maxSeq : null;
      },
      logger,
      metrics: {
        reconnects: this.streamMetrics.sseReconnects,
        lagSeconds: this.streamMetrics.sseLag,
        maxSeq: metrics.engineMaxSeq,
        events: this.streamMetrics.sseEvents,
      },
    });
    this.bridge.onSkip = (seq) => this.hub.markCoveredAfter(seq);
    this.bridge.onReset = (seq) => this.hub.resetHistory(seq);
    this.bridge.start();

    this.poller = new OrderbookPoller({
      engine,
      depth: config.wsOrderbookDepth,
      pollMs: config.wsOrderbookPollMs,
      onFrame: (f) => this.hub.publish(f),
      // Rule 1 is judged again for the connections already open whenever the market list loads or changes.
      onMarkets: (known) => this.hub.setKnownMarkets(known),
      logger,
    });
    this.poller.start();
  }

  /** Called by the bridge for each engine event, in seq order, once. */
  onEvent(event: EngineEvent): void {
    if (event.kind === 'session.authorized' && event.party) {
      const p = event.payload as { sessionId?: unknown; sessionPublicKey?: unknown; expiresAt?: unknown };
      if (typeof p.sessionId === 'string' && typeof p.sessionPublicKey === 'string' && (typeof p.expiresAt === 'string' || typeof p.expiresAt === 'number')) {
        this.deps.sessions.add(p.sessionId, event.party, p.sessionPublicKey, p.expiresAt);
      }
    }
    const { state, frames } = project(this.state, event);
    this.state = state;
    this.hub.publishAll(frames);
  }

  /** Stops the engine side. Clients are closed (1001) by the stream plugin when the app closes. */
  async stop(): Promise<void> {
    await Promise.all([this.bridge?.stop(), this.poller?.stop()]);
  }

  /** A runtime that was never started reports itself disabled (nothing to be ready for). */
  status(): LiveStatus {
    const enabled = this.enabled && this.started;
    const bridge = this.bridge;
    const gap = bridge?.gap;
    return {
      enabled,
      connected: bridge?.connected ?? false,
      maxSeq: bridge?.lastSeq ?? null,
      ...(gap ? { gap } : {}),
    };
  }
}
