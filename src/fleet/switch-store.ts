// Armed dead man's switches (src/contracts/switch-store.ts): a Map for a single gateway; for a fleet,
// Redis: the state as JSON under `<prefix>switch:<key>` and its due time in the sorted set
// `<prefix>switches`. Taking a due switch is `ZREM` (atomic: of replicas racing for it exactly one
// gets 1) followed by reading and deleting its state, so each is fired once by whoever saw it first.
import type { ArmedSwitch, SwitchStore } from '../contracts/switch-store.js';
import { SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';

export class MemorySwitchStore implements SwitchStore {
  private readonly armed = new Map<string, ArmedSwitch>();

  async put(state: ArmedSwitch): Promise<void> {
    this.armed.set(state.key, state);
  }

  async get(key: string): Promise<ArmedSwitch | null> {
    return this.armed.get(key) ?? null;
  }

  async remove(key: string): Promise<void> {
    this.armed.delete(key);
  }

  async takeDue(now: number, max: number): Promise<ArmedSwitch[]> {
    const due: ArmedSwitch[] = [];
    for (const s of this.armed.values()) {
      if (due.length >= max) break;
      if (s.fireAt <= now) due.push(s);
    }
    for (const s of due) this.armed.delete(s.key);
    return due;
  }

  async namesOf(party: string): Promise<string[]> {
    const names: string[] = [];
    for (const s of this.armed.values()) if (s.party === party) names.push(s.name);
    return names;
  }

  get size(): number {
    return this.armed.size;
  }
}

/** How long a switch's state outlives its cancels' validity in Redis (then it is useless anyway). */
const STATE_GRACE_MS = 60_000;

export class RedisSwitchStore implements SwitchStore {
  constructor(private readonly redis: RedisHandle) {}

  private stateKey(key: string): string {
    return `${this.redis.prefix}switch:${key}`;
  }

  private get dueSet(): string {
    return `${this.redis.prefix}switches`;
  }

  private async run<T>(what: () => Promise<T>): Promise<T> {
    try {
      const value = await what();
      this.redis.succeeded();
      return value;
    } catch (err) {
      this.redis.failed('switch', 'fail_closed', err);
      throw new SharedStateUnavailableError('the dead man\'s switch state (Redis) is unavailable; retry shortly');
    }
  }

  /** The party's switch names, scored by when each stops counting (its cancels' validity). */
  private partyKey(party: string): string {
    return `${this.redis.prefix}switchnames:${party}`;
  }

  async put(state: ArmedSwitch): Promise<void> {
    const ttl = Math.max(1_000, state.validUntil + STATE_GRACE_MS - Date.now());
    await this.run(() =>
      this.redis.client
        .multi()
        .set(this.stateKey(state.key), JSON.stringify(state), 'PX', ttl)
        .zadd(this.dueSet, state.fireAt, state.key)
        .zadd(this.partyKey(state.party), state.validUntil, state.name)
        .pexpire(this.partyKey(state.party), ttl)
        .exec(),
    );
  }

  async namesOf(party: string, now: number): Promise<string[]> {
    // A fired switch's name leaves the set when its validity ends (≤ a minute): a fleet's bound is that much stricter.
    return this.run(async () => {
      await this.redis.client.zremrangebyscore(this.partyKey(party), '-inf', now);
      return this.redis.client.zrange(this.partyKey(party), '0', '-1');
    });
  }

  async get(key: string): Promise<ArmedSwitch | null> {
    const text = await this.run(() => this.redis.client.get(this.stateKey(key)));
    return text === null ? null : (JSON.parse(text) as ArmedSwitch);
  }

  async remove(key: string): Promise<void> {
    const [party, name] = splitKey(key);
    await this.run(() => this.redis.client.multi().del(this.stateKey(key)).zrem(this.dueSet, key).zrem(this.partyKey(party), name).exec());
  }

  async takeDue(now: number, max: number): Promise<ArmedSwitch[]> {
    const keys = await this.run(() => this.redis.client.zrangebyscore(this.dueSet, '-inf', now, 'LIMIT', 0, max));
    const taken: ArmedSwitch[] = [];
    for (const key of keys) {
      // Exactly one replica removes it from the set; that one fires it.
      if ((await this.run(() => this.redis.client.zrem(this.dueSet, key))) !== 1) continue;
      const text = await this.run(() => this.redis.client.getdel(this.stateKey(key)));
      if (text !== null) taken.push(JSON.parse(text) as ArmedSwitch);
    }
    return taken;
  }
}

/** `<party>\n<name>` (dead-mans-switch.ts keyOf) back into its parts; a party id holds no newline. */
function splitKey(key: string): [string, string] {
  const at = key.indexOf('\n');
  return [key.slice(0, at), key.slice(at + 1)];
}
