// Builds the app's dependencies from configuration. No I/O: pools connect on first use.
import pino from 'pino';
import type { AppDeps } from './app.js';
import type { Config } from './config/env.js';
import { Database } from './db/database.js';
import { EngineClient } from './engine/client.js';
import { Metrics } from './metrics.js';
import { SessionKeys } from './auth/session-keys.js';

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
  return {
    config,
    logger,
    db,
    engine,
    metrics: overrides.metrics ?? new Metrics(),
    sessions: overrides.sessions ?? new SessionKeys(db),
    live: overrides.live ?? null,
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await Promise.allSettled([deps.db.close(), deps.engine.close()]);
}
