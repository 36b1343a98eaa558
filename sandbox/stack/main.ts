// `npm start`: the whole local stack in one command, started in dependency order with health
// checks and stopped cleanly on Ctrl-C / SIGTERM:
//   1. PostgreSQL — embedded PGlite served on loopback (data in .data/pglite), or --external-db
//   2. the reference engine        (child process, :8080)
//   3. the reference indexer       (child process; migrates the database, follows the engine)
//   4. the gateway                 (child process, :4000; waited on until /readyz says ready)
//   5. the market simulator        (child process, SIM_RATE actions/s)
//   6. the reference web console   (in this process, :4100; sandbox/console/)
// Separate processes over loopback, like production. See docs/local-stack.md.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../pglite-server.js';
import { startConsole, type ConsoleServer } from '../console/server.js';
import { botParties } from '../simulator/simulator.js';
import { choosePort, httpOk, startChild, waitFor, type Child } from './children.js';
import { GATEWAY_NODE_FLAGS } from './gateway-node-flags.js';
import { parseOptions, USAGE, UsageError, type StackOptions } from './options.js';
import { checkRuntime } from '../../src/config/runtime.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SIM_SEED = 1;

let opts: StackOptions;
try {
  opts = parseOptions(process.argv.slice(2), process.env, root);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  if (err.message) process.stderr.write(`${err.message}\n`);
  process.stderr.write(`${USAGE}\n`);
  process.exit(err.message ? 2 : 0);
}

const say = (msg: string): void => void process.stdout.write(`[stack]    ${msg}\n`);
const runtime = checkRuntime();
if (!runtime.ok) {
  process.stderr.write(`[stack]    ${runtime.message}\n`);
  process.exit(1);
}
say(`running on ${runtime.message}`);
const children: Child[] = [];
let embedded: EmbeddedPostgres | null = null;
let consoleServer: ConsoleServer | null = null;
let failure: string | null = null;
let stopping: Promise<void> | null = null;

function shutdown(code: number, why: string): Promise<void> {
  stopping ??= (async () => {
    say(`stopping (${why})`);
    const force = setTimeout(() => process.exit(code || 1), 15_000);
    force.unref();
    await consoleServer?.close();
    // Reverse start order: the simulator and gateway go before what they depend on.
    for (const c of [...children].reverse()) await c.stop();
    await embedded?.stop().catch((err: Error) => say(`embedded database stop failed: ${err.message}`));
    say('stopped');
    process.exit(code);
  })();
  return stopping;
}
process.on('SIGINT', () => void shutdown(0, 'SIGINT'));
process.on('SIGTERM', () => void shutdown(0, 'SIGTERM'));

// `how` names the exit code or, for a child killed by a signal (OOM killer, kill -9), the signal.
const onExit = (name: string, how: string): void => {
  failure = `${name} exited unexpectedly (${how})`;
  say(failure);
  void shutdown(1, failure);
};

async function main(): Promise<void> {
  const started = Date.now();
  if (opts.reset) {
    rmSync(opts.dataDir, { recursive: true, force: true });
    say(`reset: removed ${opts.dataDir}`);
  }
  const enginePort = await choosePort(opts.enginePort);
  const gatewayPort = await choosePort(opts.gatewayPort);
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;

  // 1. Database.
  let databaseUrl: string;
  if (opts.externalDb) {
    databaseUrl = opts.externalDb;
    say('database: external PostgreSQL');
  } else {
    const dir = join(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    try {
      embedded = await startEmbeddedPostgres({ port: opts.dbPort, dataDir: dir });
    } catch (err) {
      throw new Error(`embedded PostgreSQL did not start (${(err as Error).message}); is port ${opts.dbPort} free? --reset wipes a damaged ${dir}`, { cause: err });
    }
    databaseUrl = embedded.url;
    say(`database: embedded PGlite at ${databaseUrl} (data in ${dir})`);
  }

  // 2. Engine.
  const engineStartedAt = Date.now();
  const engine = startChild('engine', 'sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_HOST: '127.0.0.1', ENGINE_ADMIN_TOKEN: opts.adminToken }, root, onExit);
  children.push(engine);
  await waitFor('engine', () => httpOk(`${engineUrl}/healthz`), 20_000, () => failure);

  // 3. Indexer. The reference engine keeps its history in memory, so a persisted mirror from an
  // earlier run is longer than the new engine's history: the indexer wipes it and starts over.
  const indexerEnv = {
    DATABASE_URL: databaseUrl,
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: opts.adminToken,
    VAULT_OPERATOR: 'operator-1',
    INDEXER_ON_ENGINE_RESET: 'wipe',
    LOG_LEVEL: opts.logLevel,
  };
  children.push(startChild('indexer', 'sandbox/indexer/main.ts', indexerEnv, root, onExit));
  const probe = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {}, connect_timeout: 3 });
  try {
    await waitFor(
      'indexer migrations',
      async () => (await probe.unsafe(`SELECT 1 FROM schema_migrations WHERE version = '0015_fired_limit'`).simple()).length === 1,
      25_000,
      () => failure,
    );
    // A mirror persisted by an earlier run belongs to an earlier engine; wait until the indexer
    // has replaced it (its first event is this engine's), so the gateway never serves stale rows.
    await waitFor(
      'indexer catching up with the new engine',
      async () => {
        const rows = await probe.unsafe(`SELECT ts FROM events WHERE seq = 1`).simple();
        return rows.length === 1 && new Date(rows[0]!.ts as string).getTime() >= engineStartedAt - 1000;
      },
      25_000,
      () => failure,
    );
  } finally {
    await probe.end({ timeout: 1 });
  }

  // 4. Gateway.
  const gatewayEnv = {
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: opts.adminToken,
    AUTH_DISABLED: String(opts.authDisabled),
    FAUCET_ENABLED: 'true',
    VAULT_OPERATOR: 'operator-1',
    CORS_ORIGINS: '*',
    DB_POOL_MAX: opts.externalDb ? '10' : '4', // PGlite runs one query at a time: a big pool only queues
    LOG_LEVEL: opts.logLevel,
  };
  children.push(startChild('gateway', 'src/main.ts', gatewayEnv, root, onExit, GATEWAY_NODE_FLAGS));
  await waitFor('gateway', () => httpOk(`${gatewayUrl}/readyz`), 25_000, () => failure);

  // 5. Simulator.
  if (opts.rate > 0) {
    children.push(startChild('simulator', 'sandbox/simulator/main.ts', {
      ENGINE_BASE_URL: engineUrl,
      ENGINE_ADMIN_TOKEN: opts.adminToken,
      SIM_RATE: String(opts.rate),
      SIM_BOTS: String(opts.bots),
      SIM_SEED: String(SIM_SEED),
    }, root, onExit));
  }

  // 6. Web console (another origin than the gateway, as a real front end would be).
  try {
    consoleServer = await startConsole({ gatewayUrl, port: opts.consolePort });
  } catch (err) {
    throw new Error(`web console did not start (${(err as Error).message}); is port ${opts.consolePort} free? (--console-port)`, { cause: err });
  }

  const party = opts.rate > 0 ? botParties(SIM_SEED, 1)[0]! : '<party>';
  const lines = [
    '',
    `Local stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `  console   ${consoleServer.url}        <- open in a browser: markets, chart, book, trading`,
    `  gateway   ${gatewayUrl}        API docs: ${gatewayUrl}/docs`,
    `  stream    ws://127.0.0.1:${gatewayPort}/v1/stream?kinds=trade,orderbook.snapshot&markets=BTC-PERP`,
    `  engine    ${engineUrl}        admin token: ${opts.adminToken}`,
    `  database  ${databaseUrl}`,
    `  simulator ${opts.rate > 0 ? `${opts.rate} actions/s, ${opts.bots} bots (bot-1 = ${party})` : 'off'}`,
    `  auth      ${opts.authDisabled ? 'disabled (--no-auth)' : 'on: /v1/users/:party/* need signed headers (npm start -- --no-auth to skip)'}`,
    '',
    'Try:',
    `  curl -s ${gatewayUrl}/readyz`,
    `  curl -s '${gatewayUrl}/v1/fills?limit=5'`,
    `  curl -s '${gatewayUrl}/v1/orders?market=BTC-PERP&limit=5'`,
    `  curl -s '${gatewayUrl}/v1/orderbook?market=ETH-PERP&depth=5'`,
    `  curl -s ${gatewayUrl}/v1/vault`,
    `  curl -s '${gatewayUrl}/v1/verifications/manifests?limit=5'`,
    `  curl -s '${gatewayUrl}/v1/events?since=0&limit=5'`,
    `  curl -s '${gatewayUrl}/v1/users/${party}/positions?status=all'${opts.authDisabled ? '' : '   # with --no-auth'}`,
    '',
    'Ctrl-C stops everything.',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  // One machine-readable line for scripts and the smoke test.
  process.stdout.write(`STACK_READY ${JSON.stringify({ console: consoleServer.url, gateway: gatewayUrl, engine: engineUrl, database: databaseUrl, pids: children.map((c) => c.proc.pid) })}\n`);
}

main().catch((err: Error) => {
  say(`failed: ${err.message}`);
  void shutdown(1, 'startup failed');
});
