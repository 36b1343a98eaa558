// Claims (src/contracts/claims.ts): in process memory for a single gateway, in Redis (`SET NX PX`,
// atomic, so two replicas claiming at the same moment cannot both win) for a fleet.
import type { Claims } from '../contracts/claims.js';
import { SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';
import { systemClock, type Clock } from '../contracts/clock.js';

/** One Map, bounded: past `maxEntries` unexpired claims it refuses new ones rather than forget one (fails closed). */
export class MemoryClaims implements Claims {
  private readonly held = new Map<string, number>();
  private lastSweep = 0;

  constructor(
    private readonly maxEntries = 1_000_000,
    private readonly clock: Clock = systemClock,
  ) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    const expiry = this.held.get(key);
    if (expiry !== undefined && expiry > now) return false;
    if (now - this.lastSweep >= 1_000 || this.held.size >= this.maxEntries) this.sweep(now);
    if (this.held.size >= this.maxEntries) throw new SharedStateUnavailableError(`the claim memory holds its maximum of ${this.maxEntries} entries; retry shortly`);
    this.held.set(key, now + Math.max(1, ttlMs));
    return true;
  }

  async release(key: string): Promise<void> {
    this.held.delete(key);
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, expiry] of this.held) if (expiry <= now) this.held.delete(key);
  }
}

/** Claims of the whole fleet. Fails closed: Redis unreachable → SharedStateUnavailableError (503). */
export class RedisClaims implements Claims {
  constructor(private readonly redis: RedisHandle) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    let answer: string | null;
    try {
      answer = await this.redis.client.set(`${this.redis.prefix}claim:${key}`, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
    } catch (err) {
      this.redis.failed('claim', 'fail_closed', err);
      throw new SharedStateUnavailableError('the shared claims (Redis) are unavailable; retry shortly');
    }
    this.redis.succeeded();
    return answer === 'OK';
  }

  async release(key: string): Promise<void> {
    try {
      await this.redis.client.del(`${this.redis.prefix}claim:${key}`);
      this.redis.succeeded();
    } catch (err) {
      // The claim then lapses at its TTL: the id stays taken a little longer, nothing is placed twice.
      this.redis.failed('claim', 'release_failed', err);
    }
  }
}
