// The faucet cooldown across replicas: before a replica asks the engine for a top-up it takes the
// party's cooldown key with `SET key token NX PX cooldown`. Redis grants it to exactly one of any
// number of simultaneous requests, on any replica; the others answer 429 with the key's remaining
// time. A request that then does not get its top-up (engine refusal or failure) gives the key back,
// so a failed attempt does not cost the party its cooldown. The mirror check (faucet-policy.ts)
// still runs first: it knows about grants older than the key (a Redis restart loses keys).
// Fails closed: without Redis the faucet answers 503 (money must not be granted twice).
import { randomUUID } from 'node:crypto';
import { SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';

export type FaucetClaim = { granted: true; release(): Promise<void> } | { granted: false; retryAfterMs: number };

export interface FaucetLock {
  claim(party: string, cooldownMs: number): Promise<FaucetClaim>;
}

// Deletes the key only if it still holds this request's token (never another request's claim).
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export class RedisFaucetLock implements FaucetLock {
  constructor(private readonly redis: RedisHandle) {}

  async claim(party: string, cooldownMs: number): Promise<FaucetClaim> {
    const key = `${this.redis.prefix}faucet:${party}`;
    const token = randomUUID();
    try {
      this.redis.ensureConnected();
      const ok = await this.redis.client.set(key, token, 'PX', cooldownMs, 'NX');
      if (ok === 'OK') {
        // The claim must survive a failover, or a second grant could follow it (docs/adr/0125).
        await this.redis.replicated().catch(async (err: unknown) => {
          await this.redis.client.eval(RELEASE, 1, key, token).catch(() => undefined);
          throw err;
        });
        this.redis.succeeded();
        return {
          granted: true,
          release: async () => {
            await this.redis.client.eval(RELEASE, 1, key, token).catch(() => undefined);
          },
        };
      }
      const ttl = await this.redis.client.pttl(key);
      this.redis.succeeded();
      return { granted: false, retryAfterMs: ttl > 0 ? ttl : cooldownMs };
    } catch (err) {
      this.redis.failed('faucet', 'fail_closed', err);
      throw new SharedStateUnavailableError('the faucet cooldown store (Redis) is unavailable; retry shortly');
    }
  }
}
