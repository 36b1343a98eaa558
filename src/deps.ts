// Builds the app's dependencies from configuration. No I/O: pools connect on first use.
import pino from 'pino';
import type { AppDeps } from './app.js';
import type { Config } from './config/env.js';
import { Database } from './db/database.js';
import { EngineClient } from './engine/client.js';
import { Metrics } from './metrics.js';
import { SessionKeys } from './auth/session-keys.js';
import { LiveRuntime } from './live.js';
import { createSharedState } from './fleet/shared-state.js';

export function createDeps(config: Config, overrides: Partial<AppDeps> = {}): AppDeps {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const db = overrides.db ?? new Database(config, logger);
  const engine =
    overrides.engine ??
    new EngineClient({
      baseUrl: config.engineBaseUrl,
      adminToken: config.engineAdminToken,
      timeoutMs: config.engineTimeoutMs,
      connections: config.engineConnections,
    });
  const metrics = overrides.metrics ?? new Metrics();
  const sessions = overrides.sessions ?? new SessionKeys(db);
  // The live runtime is built here (no I/O) and started by main.ts (or a test) with `start()`;
  // an explicit `live: null` override builds an app without it.
  const live = overrides.live !== undefined ? overrides.live : new LiveRuntime({ config, logger, db, engine, metrics, sessions });
  const fleet = overrides.fleet !== undefined ? overrides.fleet : createSharedState(config, metrics.registry, logger);
  return { config, logger, db, engine, metrics, sessions, live, fleet };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  if (deps.live instanceof LiveRuntime) await deps.live.stop();
  await Promise.allSettled([deps.db.close(), deps.engine.close(), deps.fleet?.close()]);
}
