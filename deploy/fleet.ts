// `npm run fleet`: the production shape on loopback (docs/fleet.md). Beside the reference engine,
// indexer and simulator of `npm start` (same options; PostgreSQL embedded or --external-db):
//   - two relays (engine SSE → JetStream; one is enough, the second is the hot standby),
//   - FLEET_REPLICAS gateway replicas (default 3) sharing the machine's Redis (REDIS_URL, default
//     redis://127.0.0.1:6379) and consuming the machine's NATS JetStream (NATS_URL, default
//     nats://127.0.0.1:4222),
//   - nginx in front of them on --port (default 4000), run as the current user from a temp prefix,
//   - with --observe, Prometheus scraping the replicas and relays with deploy/observability's alert
//     rules (--prometheus-port, default any free port).
// A replica or relay that dies is restarted with backoff (deploy/supervisor.ts) while the rest keep
// serving; the engine, indexer, nginx and the simulator are single here and stop the fleet if they die.
// Ctrl-C stops everything. The JetStream stream and the Redis keys of this fleet are cleared at
// start: the reference engine keeps its history in memory, so each run is a new history.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { connect as natsConnect } from 'nats';
import { seedList } from '../src/fleet/jetstream.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../sandbox/pglite-server.js';
import { choosePort, describeExit, httpOk, startChild, waitFor, type Child } from '../sandbox/stack/children.js';
import { parseOptions, USAGE, UsageError, type StackOptions } from '../sandbox/stack/options.js';
import { REPLICA_KEEP_ALIVE_MS, startNginx, type RunningNginx } from './nginx.js';
import { Supervised } from './supervisor.js';
import { GATEWAY_NODE_FLAGS } from '../sandbox/stack/gateway-node-flags.js';
import { startPrometheus, type RunningPrometheus } from './prometheus.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';
const REPLICAS = Number(process.env.FLEET_REPLICAS || '3');
// FLEET_NAME keeps two fleets on one Redis and NATS apart (the tests run their own).
const NAME = process.env.FLEET_NAME || 'fleet';
const STREAM = `${NAME.toUpperCase()}_ENGINE_EVENTS`;
const SUBJECT = `${NAME}.engine.events`;
const PREFIX = `${NAME}:`;

/** `--observe [--prometheus-port <n>]`: this script's own flags, taken out before the stack's. */
function ownFlags(argv: string[]): { rest: string[]; observe: boolean; prometheusPort: number } {
  const rest: string[] = [];
  let observe = false;
  let prometheusPort = 0;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--observe') observe = true;
    else if (argv[i] === '--prometheus-port') {
      const v = argv[++i] ?? '';
      if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`--prometheus-port must be a port number, got "${v}"`);
      prometheusPort = Number(v);
    } else rest.push(argv[i]!);
  }
  return { rest, observe, prometheusPort };
}

let opts: StackOptions;
let observe = { observe: false, prometheusPort: 0 };
try {
  const own = ownFlags(process.argv.slice(2));
  observe = own;
  opts = parseOptions(own.rest, { ...process.env, STACK_DATA_DIR: process.env.STACK_DATA_DIR || '.data-fleet' }, root);
  if (!Number.isInteger(REPLICAS) || REPLICAS < 1 || REPLICAS > 32) throw new UsageError('FLEET_REPLICAS must be 1..32');
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  if (err.message) process.stderr.write(`${err.message}\n`);
  process.stderr.write(
    `${USAGE.replace('npm start', 'npm run fleet')}\n  --observe               also run Prometheus with the alert rules (deploy/observability/)\n  --prometheus-port <n>   its port (default: any free port)\n  env FLEET_REPLICAS (default 3), FLEET_NAME (default fleet), FLEET_ALERT_FOR (default 5s), REDIS_URL, NATS_URL (one URL or a cluster's comma-separated seeds), NATS_STREAM_REPLICAS (default 3 with 3+ seeds, else 1)\n`,
  );
  process.exit(err.message ? 2 : 0);
}

const say = (msg: string): void => void process.stdout.write(`[fleet]    ${msg}\n`);
const children: Array<Pick<Child, 'name' | 'stop'>> = [];
let embedded: EmbeddedPostgres | null = null;
let nginx: RunningNginx | null = null;
let prometheus: RunningPrometheus | null = null;
let failure: string | null = null;
let stopping: Promise<void> | null = null;

function shutdown(code: number, why: string): Promise<void> {
  stopping ??= (async () => {
    say(`stopping (${why})`);
    const force = setTimeout(() => process.exit(code || 1), 15_000);
    force.unref();
    await prometheus?.stop().catch(() => undefined);
    await nginx?.stop().catch(() => undefined);
    for (const c of [...children].reverse()) await c.stop();
    await embedded?.stop().catch(() => undefined);
    say('stopped');
    process.exit(code);
  })();
  return stopping;
}
process.on('SIGINT', () => void shutdown(0, 'SIGINT'));
process.on('SIGTERM', () => void shutdown(0, 'SIGTERM'));
const onExit = (name: string, how: string): void => {
  failure = `${name} exited unexpectedly (${how})`;
  say(failure);
  void shutdown(1, failure);
};

/** A fresh history for this run: the fleet's stream and Redis keys are cleared. */
async function clearSharedState(): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000 });
  try {
    await redis.connect();
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length) await redis.del(...keys);
  } catch (err) {
    throw new Error(`Redis at ${REDIS_URL} does not answer (${(err as Error).message}); start it or set REDIS_URL`, { cause: err });
  } finally {
    redis.disconnect();
  }
  let nc;
  try {
    nc = await natsConnect({ servers: seedList(NATS_URL), timeout: 2_000 });
  } catch (err) {
    throw new Error(`NATS at ${NATS_URL} does not answer (${(err as Error).message}); start nats-server -js or set NATS_URL`, { cause: err });
  }
  await (await nc.jetstreamManager()).streams.delete(STREAM).catch(() => undefined);
  await nc.close();
}

async function main(): Promise<void> {
  const started = Date.now();
  if (opts.reset) rmSync(opts.dataDir, { recursive: true, force: true });
  await clearSharedState();
  const enginePort = await choosePort(opts.enginePort);
  const lbPort = await choosePort(opts.gatewayPort);
  const engineUrl = `http://127.0.0.1:${enginePort}`;

  let databaseUrl: string;
  if (opts.externalDb) databaseUrl = opts.externalDb;
  else {
    const dir = join(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    embedded = await startEmbeddedPostgres({ port: opts.dbPort, dataDir: dir });
    databaseUrl = embedded.url;
  }
  say(`database: ${databaseUrl}`);

  const engineStartedAt = Date.now();
  children.push(startChild('engine', 'sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_HOST: '127.0.0.1', ENGINE_ADMIN_TOKEN: opts.adminToken }, root, onExit));
  await waitFor('engine', () => httpOk(`${engineUrl}/healthz`), 60_000, () => failure);

  children.push(
    startChild(
      'indexer',
      'sandbox/indexer/main.ts',
      { DATABASE_URL: databaseUrl, ENGINE_BASE_URL: engineUrl, ENGINE_ADMIN_TOKEN: opts.adminToken, VAULT_OPERATOR: 'operator-1', INDEXER_ON_ENGINE_RESET: 'wipe', LOG_LEVEL: opts.logLevel },
      root,
      onExit,
    ),
  );
  const probe = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {}, connect_timeout: 3 });
  try {
    await waitFor('indexer migrations', async () => (await probe.unsafe(`SELECT 1 FROM schema_migrations WHERE version = '0015_fired_limit'`).simple()).length === 1, 60_000, () => failure);
    await waitFor(
      'indexer catching up with the new engine',
      async () => {
        const rows = await probe.unsafe(`SELECT ts FROM events WHERE seq = 1`).simple();
        return rows.length === 1 && new Date(rows[0]!.ts as string).getTime() >= engineStartedAt - 1000;
      },
      60_000,
      () => failure,
    );
  } finally {
    await probe.end({ timeout: 1 });
  }

  const shared = {
    DATABASE_URL: databaseUrl,
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: opts.adminToken,
    NATS_URL,
    NATS_STREAM: STREAM,
    NATS_SUBJECT: SUBJECT,
    // A cluster's seed list (NATS_URL=a,b,c) gets a stream replicated on 3 servers unless told otherwise.
    NATS_STREAM_REPLICAS: process.env.NATS_STREAM_REPLICAS ?? (seedList(NATS_URL).length >= 3 ? '3' : '1'),
    LOG_LEVEL: opts.logLevel,
  };
  const relayPorts = [await choosePort(), await choosePort()];
  const members: Supervised[] = [];
  relayPorts.forEach((port, i) => members.push(new Supervised({ name: `relay-${i + 1}`, entry: 'src/relay/main.ts', env: { ...shared, PORT: String(port), HOST: '127.0.0.1' }, cwd: root, say })));
  children.push(...members);
  await waitFor('relay', async () => (await Promise.all(relayPorts.map((p) => httpOk(`http://127.0.0.1:${p}/readyz`).catch(() => false)))).some(Boolean), 60_000, () => failure);

  const replicaPorts: number[] = [];
  for (let i = 0; i < REPLICAS; i++) replicaPorts.push(await choosePort());
  replicaPorts.forEach((port, i) => {
    const replica = new Supervised({
      name: `gw-${i + 1}`,
      entry: 'src/main.ts',
      nodeFlags: GATEWAY_NODE_FLAGS,
      env: {
          ...shared,
          PORT: String(port),
          HOST: '127.0.0.1',
          REDIS_URL,
          REDIS_PREFIX: PREFIX,
          TRUST_PROXY: '127.0.0.1',
          // Behind nginx every TCP connection comes from nginx: the per-client TCP cap is nginx's
          // (limit_conn in the template); the stream cap keys on the forwarded client (docs/security.md).
          HTTP_MAX_CONNECTIONS_PER_IP: '0',
          // nginx closes idle connections first (deploy/nginx.ts proxyIdleTimeoutMs).
          HTTP_KEEP_ALIVE_TIMEOUT_MS: String(REPLICA_KEEP_ALIVE_MS),
          AUTH_DISABLED: String(opts.authDisabled),
          FAUCET_ENABLED: 'true',
          VAULT_OPERATOR: 'operator-1',
          CORS_ORIGINS: '*',
          DB_POOL_MAX: opts.externalDb ? '10' : '2',
      },
      cwd: root,
      say,
    });
    members.push(replica);
    children.push(replica);
  });
  await waitFor('replicas', async () => (await Promise.all(replicaPorts.map((p) => httpOk(`http://127.0.0.1:${p}/readyz`)))).every(Boolean), 90_000, () => failure);

  nginx = await startNginx({ listen: `127.0.0.1:${lbPort}`, upstreams: replicaPorts.map((p) => `127.0.0.1:${p}`), prefix: join(opts.dataDir, 'nginx'), replicaKeepAliveMs: REPLICA_KEEP_ALIVE_MS });
  nginx.proc.once('exit', (code, signal) => {
    if (!stopping) onExit('nginx', describeExit(code, signal));
  });

  if (opts.rate > 0) {
    children.push(
      startChild('simulator', 'sandbox/simulator/main.ts', { ENGINE_BASE_URL: engineUrl, ENGINE_ADMIN_TOKEN: opts.adminToken, SIM_RATE: String(opts.rate), SIM_BOTS: String(opts.bots), SIM_SEED: '1' }, root, onExit),
    );
  }

  if (observe.observe) {
    prometheus = await startPrometheus({
      port: await choosePort(observe.prometheusPort),
      dir: join(opts.dataDir, 'prometheus'),
      rules: join(root, 'deploy', 'observability', 'prometheus', 'alerts.yml'),
      replicas: replicaPorts.map((p) => `127.0.0.1:${p}`),
      relays: relayPorts.map((p) => `127.0.0.1:${p}`),
    });
    prometheus.proc.once('exit', (code, signal) => {
      if (!stopping) onExit('prometheus', describeExit(code, signal));
    });
  }

  const lb = `http://127.0.0.1:${lbPort}`;
  process.stdout.write(
    [
      '',
      `Local fleet ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `  nginx     ${lb}   (ws://127.0.0.1:${lbPort}/v1/stream)`,
      `  replicas  ${replicaPorts.map((p) => `127.0.0.1:${p}`).join(', ')}`,
      `  relays    ${relayPorts.map((p) => `127.0.0.1:${p}`).join(', ')} (JetStream stream ${STREAM} at ${NATS_URL})`,
      `  redis     ${REDIS_URL} (keys ${PREFIX}*)`,
      `  engine    ${engineUrl}   database ${databaseUrl}`,
      ...(prometheus ? [`  prometheus ${prometheus.url}   (alerts: ${prometheus.url}/alerts)`] : []),
      '',
      `  curl -si ${lb}/v1/orderbook?market=BTC-PERP | grep -i x-upstream   # which replica answered`,
      '',
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
  const pids = Object.fromEntries(members.map((m) => [m.name, m.pid]));
  process.stdout.write(`FLEET_READY ${JSON.stringify({ nginx: lb, replicas: replicaPorts, relays: relayPorts, engine: engineUrl, pids, prometheus: prometheus?.url ?? null })}\n`);
}

main().catch((err: Error) => {
  say(`failed: ${err.message}`);
  void shutdown(1, 'startup failed');
});
