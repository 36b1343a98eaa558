// The only file that listens: loads configuration, builds the app, starts background work,
// and shuts down cleanly on SIGINT/SIGTERM (WebSocket clients get close code 1001).
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/env.js';
import { closeDeps, createDeps } from './deps.js';
import { checkRuntime } from './config/runtime.js';
import { startTracing, stopTracing } from './tracing/index.js';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

// Before anything is built, so the HTTP plugin exists when the app registers it (off: nothing loads).
if (config.tracing) await startTracing('trading-gateway');
const deps = createDeps(config);

// A rejection nobody awaited (a driver's internal promise on a broken connection, say) is logged,
// not allowed to take the whole gateway down with every client connected to it.
process.on('unhandledRejection', (reason) => {
  deps.logger.error({ err: reason }, 'unhandled rejection');
});
const app = await buildApp(deps);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  // Stop taking engine events first, then close the app: its preClose hook sends 1001 to every
  // WebSocket client before the HTTP server stops.
  await deps.live?.stop();
  await app.close();
  await closeDeps(deps);
  await stopTracing(); // the last spans are exported, not lost with the process
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

// The spec lets a gateway run without the admin token (clients connect and receive nothing); said
// once at start, so a deployment that forgot it is not silent (/readyz says it too).
if (config.engineAdminToken === null) {
  app.log.warn(
    { setting: 'ENGINE_ADMIN_TOKEN' },
    `ENGINE_ADMIN_TOKEN is not set: no engine events, stream clients connect and receive nothing${config.nodeEnv === 'production' ? '; /readyz and /readyz/replica answer 503' : ''}`,
  );
}

const runtime = checkRuntime();
if (runtime.ok) app.log.info({ node: runtime.version }, 'runtime');
else app.log.warn({ node: runtime.version }, runtime.message);

try {
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  app.log.fatal({ err }, 'could not listen');
  process.exit(1);
}

// Redis connects lazily; reaching it now makes bff_redis_up true from the start rather than after
// the first request that needs it (a replica without signed traffic yet is not "Redis down").
void deps.fleet?.status();

// The SSE bridge and order book poller start once the gateway listens (no-op without ENGINE_ADMIN_TOKEN).
await deps.live?.start();
