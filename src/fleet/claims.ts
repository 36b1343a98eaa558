// Claims (src/contracts/claims.ts): in process memory for a single gateway, in Redis (`SET NX PX`,
// atomic, so two replicas claiming at the same moment cannot both win) for a fleet.
import type { Claims, HeldClaim } from '../contracts/claims.js';
import { SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';
import { systemClock, type Clock } from '../contracts/clock.js';

/** One Map, bounded: past `maxEntries` unexpired claims it refuses new ones rather than forget one (fails closed). */
export class MemoryClaims implements Claims {
  private readonly held = new Map<string, { expiry: number; note: string }>();
  private lastSweep = 0;

  constructor(
    private readonly maxEntries = 1_000_000,
    private readonly clock: Clock = systemClock,
  ) {}

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    const held = this.held.get(key);
    if (held !== undefined && held.expiry > now) return false;
    if (now - this.lastSweep >= 1_000 || this.held.size >= this.maxEntries) this.sweep(now);
    if (this.held.size >= this.maxEntries) throw new SharedStateUnavailableError(`the claim memory holds its maximum of ${this.maxEntries} entries; retry shortly`);
    this.held.set(key, { expiry: now + Math.max(1, ttlMs), note: '' });
    return true;
  }

  async release(key: string): Promise<void> {
    this.held.delete(key);
  }

  async read(key: string): Promise<HeldClaim | null> {
    const held = this.held.get(key);
    const left = held === undefined ? 0 : held.expiry - this.clock.now();
    return held !== undefined && left > 0 ? { note: held.note, ttlMs: left } : null;
  }

  async note(key: string, note: string, ttlMs: number): Promise<boolean> {
    const held = this.held.get(key);
    if (held === undefined || held.expiry <= this.clock.now()) return false;
    this.held.set(key, { expiry: this.clock.now() + Math.max(1, ttlMs), note });
    return true;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, held] of this.held) if (held.expiry <= now) this.held.delete(key);
  }
}

/** Claims of the whole fleet. Fails closed: Redis unreachable → SharedStateUnavailableError (503). */
export class RedisClaims implements Claims {
  constructor(private readonly redis: RedisHandle) {}

  private key(key: string): string {
    return `${this.redis.prefix}claim:${key}`;
  }

  private unavailable(err: unknown): never {
    this.redis.failed('claim', 'fail_closed', err);
    throw new SharedStateUnavailableError('the shared claims (Redis) are unavailable; retry shortly');
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    let answer: string | null;
    try {
      // An empty note: nothing known yet of what the claim holds.
      answer = await this.redis.client.set(this.key(key), '', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
    } catch (err) {
      this.unavailable(err);
    }
    this.redis.succeeded();
    return answer === 'OK';
  }

  async release(key: string): Promise<void> {
    try {
      await this.redis.client.del(this.key(key));
      this.redis.succeeded();
    } catch (err) {
      // The claim then lapses at its TTL: the id stays taken a little longer, nothing is placed twice.
      this.redis.failed('claim', 'release_failed', err);
    }
  }

  async read(key: string): Promise<HeldClaim | null> {
    let answer: [Error | null, unknown][] | null;
    try {
      answer = await this.redis.client.multi().get(this.key(key)).pttl(this.key(key)).exec();
    } catch (err) {
      this.unavailable(err);
    }
    this.redis.succeeded();
    const note = answer?.[0]?.[1];
    const ttlMs = answer?.[1]?.[1];
    // PTTL -2: gone between the two (cannot happen in MULTI), -1: no TTL (never written so).
    return typeof note === 'string' && typeof ttlMs === 'number' && ttlMs > 0 ? { note, ttlMs } : null;
  }

  async note(key: string, note: string, ttlMs: number): Promise<boolean> {
    let answer: string | null;
    try {
      answer = await this.redis.client.set(this.key(key), note, 'PX', Math.max(1, Math.ceil(ttlMs)), 'XX');
    } catch (err) {
      this.unavailable(err);
    }
    this.redis.succeeded();
    return answer === 'OK';
  }
}
