// Which transport brings the engine's history (src/contracts/engine-event-source.ts): a fleet
// replica's JetStream stream with NATS_URL, else the engine's admin SSE. The runtime (live.ts)
// is given the chosen source and knows neither.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config/env.js';
import type { Database } from './db/database.js';
import type { EngineClient } from './engine/client.js';
import type { Metrics } from './metrics.js';
import { systemClock, type Clock } from './contracts/clock.js';
import type { EngineEventSink, EngineEventSource } from './contracts/engine-event-source.js';
import { engineHead } from './engine/engine-head.js';
import { SseBridge } from './engine/sse-bridge.js';
import type { SourceMetrics } from './engine/ordered-delivery.js';
import { JetStreamSource } from './fleet/jetstream-source.js';
import { eventStore } from './stream/event-store.js';
import { StreamMetrics } from './stream/metrics.js';

export interface LiveSourceDeps {
  config: Config;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  /** The source's timers (backoff, watchdogs, head checks); default systemClock. */
  clock?: Clock;
  /** The SSE bridge's backoff jitter, numbers in [0, 1); default Math.random. */
  random?: () => number;
}

export type MakeEngineEventSource = (sink: EngineEventSink) => EngineEventSource;

export function engineEventSource(deps: LiveSourceDeps): MakeEngineEventSource {
  const { config, db, engine, logger } = deps;
  const clock = deps.clock ?? systemClock;
  return (sink) => {
    const stream = StreamMetrics.for(deps.metrics.registry);
    const metrics: SourceMetrics = { reconnects: stream.sseReconnects, lagSeconds: stream.sseLag, maxSeq: deps.metrics.engineMaxSeq, events: stream.sseEvents, oversized: stream.sseOversized };
    if (config.natsUrl) {
      return new JetStreamSource({
        url: config.natsUrl,
        stream: config.natsStream,
        subject: config.natsSubject,
        prefill: config.wsHistorySize,
        sink,
        fillFrom: eventStore(db),
        logger,
        metrics,
        engineHead: () => engineHead(engine, 1_500),
        behindMaxS: config.streamBehindMaxS,
        clock,
      });
    }
    return new SseBridge({
      url: engineStreamUrl(config.engineBaseUrl),
      token: config.engineAdminToken ?? '',
      idleMs: config.sseIdleMs,
      maxEventBytes: config.sseMaxEventBytes,
      sink,
      fillFrom: eventStore(db),
      engineHead: () => engineHead(engine, 2_000),
      logger,
      metrics,
      clock,
      ...(deps.random ? { random: deps.random } : {}),
    });
  };
}

function engineStreamUrl(base: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/admin/events/stream`;
  return url.toString();
}
