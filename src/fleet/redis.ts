// The gateway's one Redis connection (REDIS_URL), shared by the rate limits, the signature replay
// memory and the faucet lock (docs/fleet.md). No I/O until the first command (lazyConnect), so
// building the app stays free of I/O.
//
// Failing fast matters more than waiting: a command that has no answer within COMMAND_TIMEOUT_MS
// fails, and each use decides what a failure means (replay memory and faucet: refuse with 503;
// rate limits: let the request through). `bff_redis_up` and /readyz say whether Redis answers;
// `bff_redis_failures_total{use,outcome}` counts the requests decided without it.
import { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';

export const COMMAND_TIMEOUT_MS = 500;

export type RedisUse = 'replay' | 'rate_limit' | 'faucet' | 'claim' | 'switch';
export type FailureOutcome = 'fail_open' | 'fail_closed' | 'release_failed';

export interface RedisStatus {
  configured: true;
  reachable: boolean;
  error?: string;
}

export class RedisHandle {
  readonly client: Redis;
  private readonly up: Gauge;
  private readonly failures: Counter<'use' | 'outcome'>;
  private lastError: string | null = null;
  private lastWarnAt = new Map<RedisUse, number>();

  constructor(
    url: string,
    readonly prefix: string,
    registry: Registry,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.client = new Redis(url, {
      lazyConnect: true,
      connectTimeout: 1_000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      // A command issued while disconnected waits for the connection at most COMMAND_TIMEOUT_MS,
      // then fails and its use decides; it is not retried on a later connection.
      maxRetriesPerRequest: 0,
      // Reconnect forever, at most every 2 s.
      retryStrategy: (times) => Math.min(2_000, 50 * 2 ** Math.min(times, 6)),
    });
    this.up = new Gauge({ name: 'bff_redis_up', help: '1 when the last Redis exchange succeeded (REDIS_URL set), else 0', registers: [registry] });
    this.failures = new Counter({
      name: 'bff_redis_failures_total',
      help: 'Requests decided without Redis, by use (replay, rate_limit, faucet) and outcome (fail_open: let through, fail_closed: refused 503)',
      labelNames: ['use', 'outcome'],
      registers: [registry],
    });
    this.client.on('ready', () => {
      this.lastError = null;
      this.up.set(1);
      this.logger.info('redis: connected');
    });
    this.client.on('error', (err: Error) => this.noteError(err));
    this.client.on('end', () => this.up.set(0));
    this.up.set(0);
  }

  private noteError(err: Error): void {
    const first = this.lastError === null;
    this.lastError = err.message || err.name;
    this.up.set(0);
    if (first) this.logger.warn({ err: this.lastError }, 'redis: unreachable');
  }

  /** A use decided a request without Redis: counted, and logged at most every 10 s per use. */
  failed(use: RedisUse, outcome: FailureOutcome, err: unknown): void {
    this.failures.inc({ use, outcome });
    this.noteError(err instanceof Error ? err : new Error(String(err)));
    const now = Date.now();
    if (now - (this.lastWarnAt.get(use) ?? 0) >= 10_000) {
      this.lastWarnAt.set(use, now);
      this.logger.warn({ use, outcome, err: this.lastError }, `redis unavailable: ${use} ${outcome === 'fail_open' ? 'lets requests through' : 'refuses requests (503)'}`);
    }
  }

  succeeded(): void {
    if (this.lastError !== null && this.client.status === 'ready') this.lastError = null;
    this.up.set(1);
  }

  /** For /readyz: a PING within the command timeout. */
  async status(): Promise<RedisStatus> {
    try {
      await this.client.ping();
      this.succeeded();
      return { configured: true, reachable: true };
    } catch (err) {
      this.noteError(err as Error);
      return { configured: true, reachable: false, error: this.lastError ?? 'unreachable' };
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}
