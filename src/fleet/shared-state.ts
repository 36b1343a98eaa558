// What the replicas of a fleet share, built from REDIS_URL or REDIS_SENTINELS (docs/fleet.md). Without either: nothing
// (the replay memory stays in process memory, the rate limit uses the plugin's memory store, and
// the faucet relies on the mirror and its in-process record), exactly as a single gateway.
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config/env.js';
import type { ReplayGuard } from '../contracts/replay-guard.js';
import { RedisHandle, type RedisStatus, type RedisTarget } from './redis.js';
import { RedisReplayGuard } from './redis-replay-guard.js';
import { RedisFaucetLock, type FaucetLock } from './faucet-lock.js';

export interface SharedState {
  redis: RedisHandle;
  replays: ReplayGuard;
  faucetLock: FaucetLock;
  status(): Promise<RedisStatus>;
  close(): Promise<void>;
}

export function createSharedState(config: Config, registry: Registry, logger: FastifyBaseLogger): SharedState | null {
  const target: RedisTarget | null = config.redisSentinels
    ? { sentinels: config.redisSentinels, name: config.redisSentinelName, password: config.redisPassword, sentinelPassword: config.redisSentinelPassword }
    : config.redisUrl !== null
      ? { url: config.redisUrl }
      : null;
  if (target === null) return null;
  const redis = new RedisHandle(target, config.redisPrefix, registry, logger, config.redisWaitReplicas);
  return {
    redis,
    replays: new RedisReplayGuard(redis),
    faucetLock: new RedisFaucetLock(redis),
    status: () => redis.status(),
    close: () => redis.close(),
  };
}
