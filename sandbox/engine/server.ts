/** startEngine(): the reference engine as a real HTTP server (port 0 supported). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EngineCore, type EngineCoreOptions } from './core.js';
import { createHandler } from './http.js';
import { SseHub } from './sse.js';
import { loadSodium } from './sodium.js';
import { SodiumVerifier, ThreadPoolVerifier, VerifyPool } from './verify-pool.js';

export interface StartEngineOptions extends EngineCoreOptions {
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Bearer token of the admin routes. Default `dev-admin-token`. */
  adminToken?: string;
  /** SSE heartbeat period in ms (default 15 000). */
  heartbeatMs?: number;
  /** engine.tick_start period in ms (default 1000; 0 disables the timer, call engine.tick()). */
  tickMs?: number;
  /** Commitment period in ms (default 5000; 0 disables the timer, call engine.commit()). */
  commitMs?: number;
  /** Signed requests per second per X-User before 429 (default 0 = unlimited). */
  rateLimitPerSec?: number;
  /** Largest accepted request body (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Where request signatures are verified: `workers` (dedicated worker threads, batched messages),
   * `main` (inline on the main thread) or `uv` (async node:crypto on libuv's thread pool; always
   * OpenSSL). Default: `workers` when libsodium loads, else `uv`. Unset with `verifyWorkers: 0`
   * means `main` (the older spelling).
   */
  verifier?: VerifierPlace;
  /** Worker threads of the `workers` verifier (default 2); 0 selects `main` when `verifier` is unset. */
  verifyWorkers?: number;
  /**
   * ed25519 implementation of the `workers` and `main` verifiers: `sodium` (libsodium through
   * sodium-native, the default when it loads; about twice as cheap) or `node` (node:crypto).
   */
  verifyCrypto?: 'sodium' | 'node';
}

export type VerifierPlace = 'workers' | 'main' | 'uv';

/** Worker threads of the default verifier. */
export const DEFAULT_VERIFY_WORKERS = 2;

export interface RunningEngine {
  url: string;
  port: number;
  adminToken: string;
  engine: EngineCore;
  server: Server;
  /** Open admin SSE connections (for tests and metrics). */
  sse: SseHub;
  /** How signatures are verified, in words (for logs and benches). */
  verifier: string;
  close(): Promise<void>;
}

export async function startEngine(options: StartEngineOptions = {}): Promise<RunningEngine> {
  const engine = new EngineCore(options);
  const adminToken = options.adminToken ?? 'dev-admin-token';
  const sse = new SseHub(engine.log);
  const sodium = options.verifyCrypto === 'node' ? null : await loadSodium();
  const place: VerifierPlace =
    options.verifier ?? (options.verifyWorkers === 0 ? 'main' : options.verifyWorkers !== undefined ? 'workers' : sodium ? 'workers' : 'uv');
  const lib = sodium ? 'libsodium' : 'node:crypto';
  let pool: { verify(k: string, m: Buffer, s: string): Promise<boolean>; close(): Promise<void> } | undefined;
  let verifier: string;
  if (place === 'uv') {
    pool = new ThreadPoolVerifier();
    verifier = 'async node:crypto verify on the libuv thread pool';
  } else if (place === 'main') {
    pool = sodium ? new SodiumVerifier(sodium.lib) : undefined; // undefined: node:crypto inline
    verifier = `${lib} inline on the main thread`;
  } else {
    const n = options.verifyWorkers !== undefined && options.verifyWorkers > 0 ? options.verifyWorkers : DEFAULT_VERIFY_WORKERS;
    pool = new VerifyPool(n, sodium?.path);
    verifier = `${lib} on ${n} worker thread${n === 1 ? '' : 's'}`;
  }
  const handler = createHandler(engine, sse, {
    adminToken,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    rateLimitPerSec: options.rateLimitPerSec ?? 0,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
  }, pool ? (k, m, s) => pool.verify(k, m, s) : undefined);
  const server = createServer({ keepAliveTimeout: 65_000, noDelay: true }, handler);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8080, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const timers: NodeJS.Timeout[] = [];
  const tickMs = options.tickMs ?? 1000;
  const commitMs = options.commitMs ?? 5000;
  if (tickMs > 0) timers.push(setInterval(() => engine.tick(), tickMs));
  if (commitMs > 0) timers.push(setInterval(() => engine.commit(), commitMs));

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      for (const t of timers) clearInterval(t);
      sse.closeAll();
      server.close(() => {
        void (pool?.close() ?? Promise.resolve()).then(() => resolve());
      });
      server.closeAllConnections();
    });
    return closed;
  };
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${port}`, port, adminToken, engine, server, sse, verifier, close };
}
