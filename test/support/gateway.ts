// Builds a gateway app for tests from environment-style settings, through the same loadConfig
// and createDeps as production. `listen: true` puts it on a loopback port for real HTTP/WS clients.
import pino from 'pino';
import { buildApp, type App, type AppDeps } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.js';
import { closeDeps, createDeps } from '../../src/deps.js';
import { Metrics } from '../../src/metrics.js';
import type { LiveRuntime } from '../../src/live.js';
import { waitFor } from './scripted-sse.js';

export interface TestGateway {
  app: App;
  deps: AppDeps;
  /** Base URL when listening, e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

export async function startGateway(
  env: Record<string, string | undefined> = {},
  options: { listen?: boolean; overrides?: Partial<AppDeps>; logLevel?: string } = {},
): Promise<TestGateway> {
  const config = loadConfig({ ENGINE_BASE_URL: 'http://127.0.0.1:9', ...env });
  const logger = options.overrides?.logger ?? pino({ level: options.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'silent' });
  const deps = createDeps(config, { logger, metrics: new Metrics({ defaultMetrics: false }), ...options.overrides });
  const app = await buildApp(deps);
  let url = '';
  if (options.listen) {
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  } else {
    await app.ready();
  }
  return {
    app,
    deps,
    url,
    async close() {
      await app.close();
      await closeDeps(deps);
    },
  };
}

/**
 * A listening gateway on a real engine's event stream, its live runtime started and connected (and,
 * with `markets`, holding the engine's market list): what every end-to-end stream test starts from.
 */
export async function startLiveGateway(
  engine: { url: string; adminToken: string },
  env: Record<string, string | undefined> = {},
  options: { markets?: boolean } = {},
): Promise<TestGateway & { live: LiveRuntime }> {
  const gw = await startGateway({ ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, ...env }, { listen: true });
  const live = gw.deps.live as LiveRuntime;
  await live.start();
  await waitFor(() => live.status().connected, 5_000, 'bridge');
  if (options.markets) await waitFor(() => live.knownMarkets() !== null, 5_000, 'market list');
  return Object.assign(gw, { live });
}
