// A budget of work per client address and window (docs/security.md "Work a message triggers"):
// `take(address, n)` spends n units of it, or says how long until the window restarts. Fixed
// windows, counted in process memory, or with REDIS_URL in one Redis counter per address for the
// whole fleet (one INCRBY and, on a new window, PEXPIRE, atomically), failing open like the rate
// limits: a budget protects capacity, and Redis being down must not refuse every subscriber.
import type { RedisHandle } from './redis.js';
import { systemClock, type Clock } from '../contracts/clock.js';

export interface BudgetVerdict {
  ok: boolean;
  /** Until the address's window restarts (when refused). */
  retryAfterMs: number;
}

export interface AddressBudget {
  readonly max: number;
  readonly windowMs: number;
  take(address: string, units: number): Promise<BudgetVerdict>;
}

/** INCRBY, a TTL on the first unit of a window; answers {count, ttl ms}. */
const TAKE = `local c = redis.call('INCRBY', KEYS[1], ARGV[1])
if c == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {c, redis.call('PTTL', KEYS[1])}`;

/** Entries of the memory counter past which expired windows are swept. */
const SWEEP_AT = 10_000;

class MemoryBudget implements AddressBudget {
  private readonly windows = new Map<string, { used: number; endsAt: number }>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly clock: Clock,
  ) {}

  async take(address: string, units: number): Promise<BudgetVerdict> {
    const now = this.clock.now();
    let w = this.windows.get(address);
    if (!w || w.endsAt <= now) {
      if (this.windows.size >= SWEEP_AT) for (const [k, v] of this.windows) if (v.endsAt <= now) this.windows.delete(k);
      w = { used: 0, endsAt: now + this.windowMs };
      this.windows.set(address, w);
    }
    w.used += units;
    return { ok: w.used <= this.max, retryAfterMs: w.endsAt - now };
  }
}

class RedisBudget implements AddressBudget {
  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly redis: RedisHandle,
    private readonly key: string,
  ) {}

  async take(address: string, units: number): Promise<BudgetVerdict> {
    try {
      const [count, ttl] = (await this.redis.client.eval(TAKE, 1, `${this.redis.prefix}wb:${this.key}:${address}`, units, this.windowMs)) as [number, number];
      this.redis.succeeded();
      return { ok: count <= this.max, retryAfterMs: ttl > 0 ? ttl : this.windowMs };
    } catch (err) {
      this.redis.failed('work_budget', 'fail_open', err);
      return { ok: true, retryAfterMs: 0 };
    }
  }
}

/** A budget named `key` (its Redis counters' name), shared through `redis` when given; in memory, windows are timed on `clock`. */
export function addressBudget(key: string, max: number, windowMs: number, redis: RedisHandle | null, clock: Clock = systemClock): AddressBudget {
  return redis ? new RedisBudget(max, windowMs, redis, key) : new MemoryBudget(max, windowMs, clock);
}
