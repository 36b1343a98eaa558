// `npm run relay`: the engine → JetStream relay as its own process (docs/fleet.md). Configured by
// the gateway's environment variables: ENGINE_BASE_URL, ENGINE_ADMIN_TOKEN, SSE_IDLE_MS, NATS_*,
// DATABASE_URL (optional: fills engine gaps from the indexer's events table and says where to start
// an empty stream), PORT for its own /healthz, /readyz and /metrics. Run two for failover.
import { createServer } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ConfigError, loadConfig, type Config } from '../config/env.js';
import { Database } from '../db/database.js';
import { EngineClient } from '../engine/client.js';
import { eventStore } from '../stream/event-store.js';
import { EngineRelay } from './relay.js';
import { startTracing, stopTracing } from '../tracing/index.js';

let config: Config;
try {
  config = loadConfig();
  if (config.natsUrl === null) throw new ConfigError('NATS_URL', 'is required by the relay');
  if (config.engineAdminToken === null) throw new ConfigError('ENGINE_ADMIN_TOKEN', 'is required by the relay');
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

// Its engine stream connections are traced like a replica's (off unless OTEL_* says otherwise).
if (config.tracing) await startTracing('trading-gateway-relay');
const logger = pino({ level: config.logLevel, base: { role: 'relay' } });
const registry = new Registry();
const db = new Database(config, logger);
const engine = new EngineClient({ baseUrl: config.engineBaseUrl, adminToken: config.engineAdminToken, timeoutMs: config.engineTimeoutMs, connections: 4 });
const url = new URL(config.engineBaseUrl);
url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/admin/events/stream`;

const relay = new EngineRelay({
  url: config.natsUrl,
  stream: config.natsStream,
  subject: config.natsSubject,
  maxAgeS: config.natsMaxAgeS,
  maxBytes: config.natsMaxBytes,
  replicas: config.natsStreamReplicas,
  engineStreamUrl: url.toString(),
  token: config.engineAdminToken,
  idleMs: config.sseIdleMs,
  maxEventBytes: config.sseMaxEventBytes,
  emptyStreamStartAfter: async () => {
    if (!db.sql) return null;
    try {
      const [row] = await db.sql<{ seq: number }[]>`SELECT seq FROM events ORDER BY seq DESC LIMIT 1`;
      return row ? Number(row.seq) : null;
    } catch {
      return null;
    }
  },
  fillFrom: eventStore(db),
  engineHead: async () => {
    const h = await engine.health(2_000);
    return typeof h.maxSeq === 'number' ? h.maxSeq : null;
  },
  logger,
  registry,
  name: `engine-relay-${process.pid}`,
});

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  } else if (path === '/readyz') {
    const ready = relay.connected;
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: ready ? 'ready' : 'degraded', streamLastSeq: relay.streamLastSeq }));
  } else if (path === '/metrics') {
    void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
  } else {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found","code":"not_found"}');
  }
});

async function shutdown(): Promise<void> {
  const force = setTimeout(() => process.exit(1), 5_000);
  force.unref();
  server.close();
  await relay.stop();
  await Promise.allSettled([db.close(), engine.close()]);
  await stopTracing();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());

for (;;) {
  try {
    await relay.start();
    break;
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'relay: NATS unavailable at start; retrying');
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
server.listen(config.port, config.host, () => logger.info({ port: config.port }, 'relay listening'));
