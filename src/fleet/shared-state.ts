// What the replicas of a fleet share, built from REDIS_URL or REDIS_SENTINELS (docs/fleet.md). Without either: nothing
// (the replay memory stays in process memory, the rate limit uses the plugin's memory store, and
// the faucet relies on the mirror and its in-process record), exactly as a single gateway.
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config/env.js';
import type { ReplayGuard } from '../contracts/replay-guard.js';
import { RedisHandle, type RedisStatus, type RedisTarget } from './redis.js';
import { RedisReplayGuard, type ReplayMemoryStatus } from './redis-replay-guard.js';
import { RedisFaucetLock, type FaucetLock } from './faucet-lock.js';
import { RedisClaims } from './claims.js';
import type { Claims } from '../contracts/claims.js';
import type { SwitchStore } from '../contracts/switch-store.js';
import { RedisSwitchStore } from './switch-store.js';

export interface SharedState {
  redis: RedisHandle;
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

export function createSharedState(config: Config, registry: Registry, logger: FastifyBaseLogger): SharedState | null {
  const target: RedisTarget | null = config.redisSentinels
    ? { sentinels: config.redisSentinels, name: config.redisSentinelName, password: config.redisPassword, sentinelPassword: config.redisSentinelPassword }
    : config.redisUrl !== null
      ? { url: config.redisUrl }
      : null;
  if (target === null) return null;
  const redis = new RedisHandle(target, config.redisPrefix, registry, logger, config.redisWaitReplicas);
  const replays = new RedisReplayGuard(redis, config.signatureWindowMs, registry, logger);
  return {
    redis,
    replays,
    faucetLock: new RedisFaucetLock(redis),
    claims: new RedisClaims(redis),
    switches: new RedisSwitchStore(redis),
    status: async () => {
      const status = await redis.status();
      if (!status.reachable) return status;
      const memory = await replays.status();
      return memory.refusingSignedBefore ? { ...status, replayMemory: memory } : status;
    },
    close: () => redis.close(),
  };
}
