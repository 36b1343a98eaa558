// A Redis connection of the gateway (REDIS_URL). The gateway keeps two to the same server
// (shared-state.ts, docs/fleet.md "Two connections"): one for what every signed call waits on
// (the replay memory, the rate limits, the client order id claims, the work budgets), one for the
// bulk (the dead man's switches, the faucet lock), so a burst of large switch writes never queues
// ahead of a signature's check on the same socket. No I/O until the first command (lazyConnect),
// so building the app stays free of I/O.
//
// Failing fast matters more than waiting: a command that has no answer within COMMAND_TIMEOUT_MS
// fails, and each use decides what a failure means (replay memory and faucet: refuse with 503;
// rate limits: let the request through). `bff_redis_up` and /readyz say whether Redis answers;
// `bff_redis_failures_total{use,outcome}` counts the requests decided without it.
import { Redis, type RedisOptions } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FastifyBaseLogger } from 'fastify';
import { DependencyState } from '../dependency-state.js';
import { systemClock, type Clock } from '../contracts/clock.js';

export const COMMAND_TIMEOUT_MS = 500;
/** How long a key waits for its replicas' acknowledgement (WAIT) before the request is refused. */
export const WAIT_TIMEOUT_MS = 250;

/** Where Redis is: one server (REDIS_URL), or the primary the sentinels name (REDIS_SENTINELS). */
export type RedisTarget =
  | { url: string }
  | { sentinels: Array<{ host: string; port: number }>; name: string; password: string | null; sentinelPassword: string | null };

/** A key was written on the primary but not acknowledged by the replicas asked for in time. */
export class NotReplicatedError extends Error {
  constructor(wanted: number, got: number) {
    super(`written on the Redis primary but acknowledged by ${got} of ${wanted} replica(s) within ${WAIT_TIMEOUT_MS} ms`);
    this.name = 'NotReplicatedError';
  }
}

export type RedisUse = 'replay' | 'rate_limit' | 'faucet' | 'work_budget' | 'claim' | 'switch';
export type FailureOutcome = 'fail_open' | 'fail_closed' | 'release_failed';

export interface RedisStatus {
  configured: true;
  reachable: boolean;
  error?: string;
  /** With REDIS_WAIT_REPLICAS > 0: the replicas asked for and those connected to the primary now. */
  replicas?: { wanted: number; connected: number };
}

/** What a connection reports to: `bff_redis_up` and `bff_redis_failures_total` (made once per registry). */
export interface RedisMeters {
  up: { set(value: number): void };
  failures: { inc(labels: { use: RedisUse; outcome: FailureOutcome }): void };
}

export function redisMeters(registry: Registry): RedisMeters {
  return {
    up: new Gauge({ name: 'bff_redis_up', help: '1 when the last Redis exchange succeeded (REDIS_URL set), else 0', registers: [registry] }),
    failures: new Counter({
      name: 'bff_redis_failures_total',
      help: 'Requests decided without Redis, by use (replay, rate_limit, faucet, work_budget) and outcome (fail_open: let through, fail_closed: refused 503)',
      labelNames: ['use', 'outcome'],
      registers: [registry],
    }),
  };
}

export class RedisHandle {
  readonly client: Redis;
  private readonly up: RedisMeters['up'];
  private readonly failures: RedisMeters['failures'];
  private lastError: string | null = null;
  /**
   * Why the connection itself fails (a sentinel's "No such master with that name", a refused
   * connection), kept apart from a command's error: while not connected, a command only times out.
   */
  private connectionError: string | null = null;
  private lastWarnAt = new Map<RedisUse, number>();
  /** One warning when Redis goes, one when it comes back (src/dependency-state.ts). */
  private readonly state: DependencyState;

  constructor(
    target: RedisTarget | string,
    readonly prefix: string,
    meters: Registry | RedisMeters,
    private readonly logger: FastifyBaseLogger,
    /** Replicas that must acknowledge a key that must survive a failover (REDIS_WAIT_REPLICAS). */
    private readonly waitReplicas = 0,
    /** Its name in the log (the bulk connection logs as `redis-bulk`). */
    name = 'redis',
    /** Paces the unavailability warnings (default systemClock). */
    private readonly clock: Clock = systemClock,
  ) {
    const options: RedisOptions = {
      lazyConnect: true,
      connectTimeout: 1_000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      // A command issued while disconnected waits for the connection at most COMMAND_TIMEOUT_MS,
      // then fails and its use decides; it is not retried on a later connection.
      maxRetriesPerRequest: 0,
      // Reconnect forever, at most every 2 s.
      retryStrategy: (times) => Math.min(2_000, 50 * 2 ** Math.min(times, 6)),
    };
    const t = typeof target === 'string' ? { url: target } : target;
    if ('url' in t) {
      this.client = new Redis(t.url, options);
    } else {
      // ioredis asks the sentinels for the primary at each (re)connection and checks its role, so a
      // failover is followed without a restart. The sentinels are retried as quickly as the primary.
      this.client = new Redis({
        ...options,
        sentinels: t.sentinels,
        name: t.name,
        ...(t.password ? { password: t.password } : {}),
        ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
        sentinelRetryStrategy: (times) => Math.min(1_000, 50 * 2 ** Math.min(times, 5)),
        // A primary that reports itself demoted (+switch-master seen by the sentinels) is left at once.
        failoverDetector: true,
      });
    }
    const m = 'up' in meters ? meters : redisMeters(meters);
    this.up = m.up;
    this.failures = m.failures;
    this.state = new DependencyState(name, logger);
    this.client.on('ready', () => {
      this.lastError = null;
      this.connectionError = null;
      this.up.set(1);
      if (this.state.down) this.state.answered();
      else this.logger.info(`${name}: connected`);
    });
    this.client.on('error', (err: Error) => {
      this.connectionError = err.message || err.name;
      this.noteError(err);
    });
    this.client.on('end', () => this.up.set(0));
    this.up.set(0);
  }

  private noteError(err: Error): void {
    this.lastError = err.message || err.name;
    this.up.set(0);
    this.state.failed(this.lastError);
  }

  /** A use decided a request without Redis: counted, and logged at most every 10 s per use. */
  failed(use: RedisUse, outcome: FailureOutcome, err: unknown): void {
    this.failures.inc({ use, outcome });
    const error = err instanceof Error ? err : new Error(String(err));
    // Redis answered but its replicas did not acknowledge: Redis is up (bff_redis_up, the log's
    // unreachable/reachable-again pair), the request is refused all the same.
    if (!(error instanceof NotReplicatedError)) this.noteError(error);
    const now = this.clock.now();
    if (now - (this.lastWarnAt.get(use) ?? 0) >= 10_000) {
      this.lastWarnAt.set(use, now);
      this.logger.warn({ use, outcome, err: error.message || error.name }, `redis unavailable: ${use} ${outcome === 'fail_open' ? 'lets requests through' : 'refuses requests (503)'}`);
    }
  }

  /**
   * Throws at once while the connection is down (reconnecting, closed), instead of leaving the
   * command in ioredis's offline queue until the next reconnection attempt fails (up to 2 s): a
   * request decided without Redis is decided now. The first connection (lazy) is let through.
   */
  ensureConnected(): void {
    const s = this.client.status;
    if (s === 'reconnecting' || s === 'close' || s === 'end') throw new Error(`Redis connection ${s}`);
  }

  /**
   * After a write that must survive a failover (a remembered signature, a faucet claim): waits until
   * REDIS_WAIT_REPLICAS replicas hold it (WAIT), so the replica Sentinel promotes when the primary
   * dies has it too. Throws NotReplicatedError when they do not acknowledge within WAIT_TIMEOUT_MS
   * (the caller fails closed); nothing to wait for when REDIS_WAIT_REPLICAS is 0.
   */
  async replicated(): Promise<void> {
    if (this.waitReplicas === 0) return;
    const acked = await this.client.wait(this.waitReplicas, WAIT_TIMEOUT_MS);
    if (acked < this.waitReplicas) throw new NotReplicatedError(this.waitReplicas, acked);
  }

  succeeded(): void {
    if (this.lastError !== null && this.client.status === 'ready') this.lastError = null;
    this.up.set(1);
    this.state.answered();
  }

  /**
   * For /readyz: a PING within the command timeout and, when replicas must acknowledge, how many the
   * primary has: fewer than REDIS_WAIT_REPLICAS refuses every signed call though Redis answers.
   */
  async status(): Promise<RedisStatus> {
    try {
      await this.client.ping();
      // A Sentinel answers PING but refuses every key command (REDIS_URL set to a sentinel's
      // address): unusable, though it answers.
      const info = await this.client.info();
      if (/^redis_mode:sentinel/m.test(info)) {
        this.noteError(new Error('REDIS_URL names a Redis Sentinel, not a Redis server: set REDIS_SENTINELS (and REDIS_SENTINEL_NAME) to use Sentinel'));
        return { configured: true, reachable: false, error: this.lastError ?? 'sentinel' };
      }
      this.succeeded();
      if (this.waitReplicas === 0) return { configured: true, reachable: true };
      const connected = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
      return { configured: true, reachable: true, replicas: { wanted: this.waitReplicas, connected } };
    } catch (err) {
      const cause = this.client.status !== 'ready' && this.connectionError !== null ? new Error(this.connectionError) : (err as Error);
      this.noteError(cause);
      return { configured: true, reachable: false, error: this.lastError ?? 'unreachable' };
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}
