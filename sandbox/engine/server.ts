/** startEngine(): the reference engine as a real HTTP server (port 0 supported). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EngineCore, type EngineCoreOptions } from './core.js';
import { createHandler } from './http.js';
import { SseHub } from './sse.js';
import { ThreadPoolVerifier, VerifyPool } from './verify-pool.js';

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
   * Where request signatures are verified. Default (undefined): libuv's thread pool, one async
   * `crypto.verify` per request (fastest on small machines: no batching, no message cloning).
   * N > 0: N dedicated worker threads with batched messages; 0: inline on the main thread.
   */
  verifyWorkers?: number;
}

export interface RunningEngine {
  url: string;
  port: number;
  adminToken: string;
  engine: EngineCore;
  server: Server;
  /** Open admin SSE connections (for tests and metrics). */
  sse: SseHub;
  close(): Promise<void>;
}

export async function startEngine(options: StartEngineOptions = {}): Promise<RunningEngine> {
  const engine = new EngineCore(options);
  const adminToken = options.adminToken ?? 'dev-admin-token';
  const sse = new SseHub(engine.log);
  const workers = options.verifyWorkers;
  const pool = workers === undefined ? new ThreadPoolVerifier() : workers > 0 ? new VerifyPool(workers) : undefined;
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
  return { url: `http://${urlHost}:${port}`, port, adminToken, engine, server, sse, close };
}
