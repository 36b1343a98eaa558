// @fastify/rate-limit options for a fleet: its own Redis store (one counter per key for every
// replica, incremented atomically by the store's Lua script), failing open. A rate limit protects
// capacity, not money or identity: when Redis does not answer, requests go through unlimited
// (`skipOnError`), each one is counted in `bff_redis_failures_total{use="rate_limit",outcome="fail_open"}`
// and a warning is logged at most every 10 s.
import { createRequire } from 'node:module';
import type { RedisHandle } from './redis.js';

type Callback = (err: Error | null, result: { current: number; ttl: number } | null) => void;

interface Store {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): Store;
}

interface StoreParams {
  continueExceeding: boolean;
  exponentialBackoff: boolean;
}

/** Wraps the plugin's Redis store so that each failure is seen (the plugin skips it silently). */
function counting(inner: Store, redis: RedisHandle): Store {
  return {
    incr(key, cb, timeWindow, max) {
      // Redis down: decided at once (fail open), not after the next reconnection attempt.
      try {
        redis.ensureConnected();
      } catch (err) {
        redis.failed('rate_limit', 'fail_open', err);
        cb(err as Error, null);
        return;
      }
      inner.incr(
        key,
        (err, result) => {
          if (err) redis.failed('rate_limit', 'fail_open', err);
          else redis.succeeded();
          cb(err, result);
        },
        timeWindow,
        max,
      );
    },
    child(routeOptions) {
      return counting(inner.child(routeOptions), redis);
    },
  };
}

export function redisRateLimitOptions(redis: RedisHandle) {
  // The plugin's own Redis store (its Lua script); the package ships it without type declarations.
  const Ctor = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    client: unknown,
    key: string,
  ) => Store;
  // The plugin constructs `store` with `new`; a function returning an object is a valid constructor.
  function FleetRateLimitStore(params: StoreParams): Store {
    return counting(new Ctor(params.continueExceeding, params.exponentialBackoff, redis.client, `${redis.prefix}rl:`), redis);
  }
  return { store: FleetRateLimitStore as unknown as never, skipOnError: true };
}
