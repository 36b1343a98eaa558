/** `tsx sandbox/engine/main.ts`: run the reference engine as its own process, configured by env. */
import { ACCOUNTING_FAULTS, type AccountingFault } from './accounts.js';
import { startEngine, type StartEngineOptions, type VerifierPlace } from './server.js';

function intEnv(name: string, fallback: number, min = 0): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function boolEnv(name: string): boolean {
  return /^(1|true|yes|on)$/i.test(process.env[name] ?? '');
}

function placeEnv(name: string): VerifierPlace {
  const v = process.env[name];
  if (v === 'workers' || v === 'main' || v === 'uv') return v;
  throw new Error(`${name} must be workers, main or uv, got ${JSON.stringify(v)}`);
}

function cryptoEnv(name: string): 'sodium' | 'node' {
  const v = process.env[name];
  if (v === 'sodium' || v === 'node') return v;
  throw new Error(`${name} must be sodium or node, got ${JSON.stringify(v)}`);
}

function faultEnv(name: string): AccountingFault | null {
  const v = process.env[name];
  if (v === undefined || v === '') return null;
  if ((ACCOUNTING_FAULTS as readonly string[]).includes(v)) return v as AccountingFault;
  throw new Error(`${name} must be one of ${ACCOUNTING_FAULTS.join(', ')}, got ${JSON.stringify(v)}`);
}

export function optionsFromEnv(): StartEngineOptions {
  return {
    port: intEnv('ENGINE_PORT', 8080),
    host: process.env.ENGINE_HOST || '127.0.0.1',
    adminToken: process.env.ENGINE_ADMIN_TOKEN || 'dev-admin-token',
    legacy: boolEnv('ENGINE_LEGACY'),
    retention: intEnv('ENGINE_RETENTION', 100_000, 1),
    heartbeatMs: intEnv('ENGINE_HEARTBEAT_MS', 15_000, 1),
    tickMs: intEnv('ENGINE_TICK_MS', 1000),
    commitMs: intEnv('ENGINE_COMMIT_MS', 5000),
    rejectCodeStyle: boolEnv('ENGINE_HEX_CODES') ? 'hex' : 'name',
    rateLimitPerSec: intEnv('ENGINE_RATE_LIMIT', 0),
    // Tests of verifiers only: a deliberate accounting fault (docs/engine.md).
    fault: faultEnv('ENGINE_CORRUPT'),
    // Unset: libsodium on 2 worker threads (libuv thread pool if sodium-native cannot load).
    ...(process.env.ENGINE_VERIFIER ? { verifier: placeEnv('ENGINE_VERIFIER') } : {}),
    // A number: that many worker threads (0 = main thread).
    ...(process.env.ENGINE_VERIFY_WORKERS ? { verifyWorkers: intEnv('ENGINE_VERIFY_WORKERS', 0) } : {}),
    ...(process.env.ENGINE_VERIFY_CRYPTO ? { verifyCrypto: cryptoEnv('ENGINE_VERIFY_CRYPTO') } : {}),
  };
}

const running = await startEngine(optionsFromEnv());
const h = running.engine.healthz();
console.log(JSON.stringify({ msg: 'engine listening', url: running.url, version: h.version, buildDate: h.buildDate, legacy: running.engine.legacy, verifier: running.verifier }));

const shutdown = (signal: string): void => {
  console.log(JSON.stringify({ msg: 'engine stopping', signal }));
  void running.close().then(() => process.exit(0));
};
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));
