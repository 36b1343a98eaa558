// `tsx sandbox/indexer/main.ts`: the reference indexer as its own process, configured by env:
//   DATABASE_URL (required), ENGINE_BASE_URL (default http://127.0.0.1:8080), ENGINE_ADMIN_TOKEN
//   (default dev-admin-token), VAULT_OPERATOR (operator-1), INDEXER_CORRUPT_USER_BATCH /
//   INDEXER_CORRUPT_BATCH (0 = off), INDEXER_CORRUPT_ACCOUNT
//   (a party: its account shown altered in the mirror; tests of verifiers only), INDEXER_ON_ENGINE_RESET (wait | wipe), LOG_LEVEL.
import pino from 'pino';
import { startIndexer, type RunningIndexer } from './indexer.js';

function intEnv(name: string): number {
  const v = process.env[name];
  if (v === undefined || v === '') return 0;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('DATABASE_URL is required\n');
  process.exit(1);
}
const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', base: { svc: 'indexer' } });
const onReset = process.env.INDEXER_ON_ENGINE_RESET === 'wipe' ? 'wipe' : 'wait';
const options = {
  databaseUrl,
  engineUrl: process.env.ENGINE_BASE_URL ?? 'http://127.0.0.1:8080',
  adminToken: process.env.ENGINE_ADMIN_TOKEN ?? 'dev-admin-token',
  vaultOperator: process.env.VAULT_OPERATOR || 'operator-1',
  corruptUserBatch: intEnv('INDEXER_CORRUPT_USER_BATCH'),
  corruptBatch: intEnv('INDEXER_CORRUPT_BATCH'),
  // Tests of verifiers only: this party's fills and positions shown altered in the mirror.
  ...(process.env.INDEXER_CORRUPT_ACCOUNT ? { corruptAccountOf: process.env.INDEXER_CORRUPT_ACCOUNT } : {}),
  onEngineReset: onReset,
  logger,
} as const;

// The database may come up after the indexer (containers, a restarting server): retry with backoff.
let indexer: RunningIndexer | undefined;
for (let delay = 250; indexer === undefined; delay = Math.min(delay * 2, 10_000)) {
  try {
    indexer = await startIndexer(options);
  } catch (err) {
    logger.warn({ err: (err as Error).message, retryInMs: delay }, 'indexer could not start (database?)');
    await new Promise((r) => setTimeout(r, delay));
  }
}
const running = indexer;
logger.info({ lastSeq: running.lastSeq() }, 'indexer started');

const shutdown = (signal: string): void => {
  logger.info({ signal, lastSeq: running.lastSeq() }, 'indexer stopping');
  void running.close().then(() => process.exit(0));
};
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));
