// The gateway's dependencies, built from configuration. No I/O: pools connect on first use, and the
// live runtime is started by main.ts (or a test) with `start()`. The app reaches them as Fastify
// decorators (src/http/dependencies.ts).
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config/env.js';
import { Database } from './db/database.js';
import { EngineClient } from './engine/client.js';
import { Metrics } from './metrics.js';
import { SessionKeys } from './auth/session-keys.js';
import { MemoryReplayGuard } from './auth/replay-guard.js';
import type { ReplayGuard } from './contracts/replay-guard.js';
import { LiveRuntime } from './live.js';
import { engineEventSource } from './live-source.js';
import { liveFeatures } from './live-features.js';
import type { HttpDeps } from './http/dependencies.js';
import { createSharedState, type SharedState } from './fleet/shared-state.js';
import { systemClock, type Clock } from './contracts/clock.js';

export interface AppDeps extends HttpDeps {
  config: Config;
  /** The one source of time and timers (systemClock; a test may pass a VirtualClock). */
  clock: Clock;
  /** Numbers in [0, 1) for the engine source's jittered backoff (Math.random; a test may pass fixed ones, as it passes a clock). */
  random?: () => number;
  logger: FastifyBaseLogger;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  /** Session public keys learnt from `session.authorized` events and the `sessions` table. */
  sessions: SessionKeys;
  /** Single-use memory of verified signatures (REST guard, proxy, stream proof); in process by default. */
  replays: ReplayGuard;
  /** The live stream runtime (engine event source, projections, hub); null in apps built without it. */
  live: LiveRuntime | null;
  /** State shared by the replicas of a fleet (REDIS_URL, src/fleet/); null: per process. */
  fleet: SharedState | null;
}

export function createDeps(config: Config, overrides: Partial<AppDeps> = {}): AppDeps {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const db = overrides.db ?? new Database(config, logger, undefined, clock);
  const engine =
    overrides.engine ??
    new EngineClient({
      baseUrl: config.engineBaseUrl,
      adminToken: config.engineAdminToken,
      timeoutMs: config.engineTimeoutMs,
      connections: config.engineConnections,
      addressInFlight: config.engineAddressInFlight,
      addressQueue: config.engineAddressQueue,
    });
  const metrics = overrides.metrics ?? new Metrics();
  const sessions = overrides.sessions ?? new SessionKeys(db, undefined, undefined, clock);
  const fleet = overrides.fleet !== undefined ? overrides.fleet : createSharedState(config, metrics.registry, logger, clock);
  // With REDIS_URL one replay memory for the whole fleet (fails closed), else this process's own.
  const replays = overrides.replays ?? fleet?.replays ?? new MemoryReplayGuard(config.replayMemoryMax, () => clock.now(), config.signatureWindowMs);
  // An explicit `live: null` override builds an app without the live runtime.
  const live = overrides.live !== undefined ? overrides.live : new LiveRuntime({ config, logger, db, engine, metrics, clock, features: liveFeatures({ config, logger, db, engine, metrics, sessions, clock }), source: engineEventSource({ config, logger, db, engine, metrics, clock, ...(overrides.random ? { random: overrides.random } : {}) }) });
  return { config, clock, logger, db, engine, metrics, sessions, replays, live, fleet };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.live?.stop();
  await Promise.allSettled([deps.db.close(), deps.engine.close(), deps.fleet?.close()]);
}
