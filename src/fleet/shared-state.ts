// What the replicas of a fleet share, built from REDIS_URL or REDIS_SENTINELS (docs/fleet.md). Without either: nothing
// (the replay memory stays in process memory, the rate limit uses the plugin's memory store, and
// the faucet relies on the mirror and its in-process record), exactly as a single gateway.
import { systemClock, type Clock } from '../contracts/clock.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config/env.js';
import type { ReplayGuard } from '../contracts/replay-guard.js';
import { RedisHandle, redisMeters, type RedisStatus, type RedisTarget } from './redis.js';
import { RedisReplayGuard, type ReplayMemoryStatus } from './redis-replay-guard.js';
import { RedisFaucetLock, type FaucetLock } from './faucet-lock.js';
import { RedisClaims } from './claims.js';
import type { Claims } from '../contracts/claims.js';
import type { SwitchStore } from '../contracts/switch-store.js';
import { RedisSwitchStore } from './switch-store.js';

export interface SharedState {
  /**
   * The connection of what a signed call waits on: the replay memory, the rate limits, the client
   * order id claims, the work budgets. Nothing bulky is sent on it.
   */
  redis: RedisHandle;
  /** The connection of the bulk: the dead man's switches (kilobytes a write), the faucet lock. */
  bulk: RedisHandle;
  replays: ReplayGuard;
  faucetLock: FaucetLock;
  /** Client order ids taken, switches armed: first replica wins (claims.ts). */
  claims: Claims;
  /** Armed dead man's switches, fired by whichever replica sees one due (switch-store.ts). */
  switches: SwitchStore;
  /** Redis's reachability, and while signatures are refused after a lost replay memory, until when. */
  status(): Promise<RedisStatus & { replayMemory?: ReplayMemoryStatus }>;
  close(): Promise<void>;
}

export function createSharedState(config: Config, registry: Registry, logger: FastifyBaseLogger, clock: Clock = systemClock): SharedState | null {
  const target: RedisTarget | null = config.redisSentinels
    ? { sentinels: config.redisSentinels, name: config.redisSentinelName, password: config.redisPassword, sentinelPassword: config.redisSentinelPassword }
    : config.redisUrl !== null
      ? { url: config.redisUrl }
      : null;
  if (target === null) return null;
  // Two connections to the same server: ioredis sends one connection's commands in order over one
  // socket, and Redis answers them in order, so a 36 KB switch write queued there delays every
  // signature check behind it. The bulk connection reports to the same failure counter; only the
  // urgent one sets bff_redis_up (what /readyz and the alerts read).
  const meters = redisMeters(registry);
  const redis = new RedisHandle(target, config.redisPrefix, meters, logger, config.redisWaitReplicas, 'redis', clock);
  const bulk = new RedisHandle(target, config.redisPrefix, { up: { set: () => undefined }, failures: meters.failures }, logger, config.redisWaitReplicas, 'redis-bulk', clock);
  const replays = new RedisReplayGuard(redis, config.signatureWindowMs, registry, logger, () => clock.now());
  return {
    redis,
    bulk,
    replays,
    faucetLock: new RedisFaucetLock(bulk),
    claims: new RedisClaims(redis),
    switches: new RedisSwitchStore(bulk, () => clock.now()),
    status: async () => {
      const status = await redis.status();
      if (!status.reachable) return status;
      const memory = await replays.status();
      return memory.refusingSignedBefore ? { ...status, replayMemory: memory } : status;
    },
    close: async () => {
      await Promise.all([redis.close(), bulk.close()]);
    },
  };
}
