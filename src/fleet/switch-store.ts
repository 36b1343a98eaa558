// Armed dead man's switches (src/contracts/switch-store.ts): Maps for a single gateway; for a fleet,
// Redis, every change one Lua script (atomic, so replicas racing on a switch see one order):
//
//   <prefix>switch:<key>        the switch as armed: party, session, name, timeout, validity, cancels (JSON, ~36 KB for 200)
//   <prefix>switchdl:<key>      its deadline's inputs (hash: timeoutMs, validUntil, cancels, heartbeatAt): what a heartbeat reads
//   <prefix>switches            sorted set: each armed switch's key scored by its fireAt
//   <prefix>switchfence:<key>   its fence: INCR by every disarm and take; an arm writes only if unchanged
//   <prefix>switchnames:<party> the party's names scored by validity (the bound of 16)
//
// A heartbeat touches only the sorted set and the small hash (O(1), never the cancels); taking a
// due switch removes it from the set, reads and deletes its state and moves its fence in one script,
// so exactly one replica fires it and no arm or heartbeat can bring it back (docs/adr/0200).
import type { ArmedSwitch, SwitchDeadline, SwitchStore } from '../contracts/switch-store.js';
import { SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';

/**
 * How long a moved fence is remembered: far longer than any arm can be in flight (its checks are
 * bounded by the signatures' window); past it an unknown fence reads 0 again, which no arm read
 * before a disarm can match unless none had moved it (then there is nothing to fence).
 */
export const FENCE_TTL_MS = 600_000;

type SwitchSpec = Omit<ArmedSwitch, 'fireAt' | 'heartbeatAt'>;

function deadline(now: number, timeoutMs: number, validUntil: number, marginMs: number): number {
  return Math.min(now + timeoutMs, validUntil - marginMs);
}

export class MemorySwitchStore implements SwitchStore {
  private readonly armed = new Map<string, ArmedSwitch>();
  /** key → [fence, expiry ms]. */
  private readonly fences = new Map<string, [number, number]>();
  private lastSweep = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  async fence(key: string): Promise<number> {
    return this.fenceNow(key);
  }

  private fenceNow(key: string): number {
    const f = this.fences.get(key);
    return f && f[1] > this.clock() ? f[0] : 0;
  }

  private move(key: string): void {
    const now = this.clock();
    this.fences.set(key, [this.fenceNow(key) + 1, now + FENCE_TTL_MS]);
    if (now - this.lastSweep >= 60_000) {
      this.lastSweep = now;
      for (const [k, [, expiry]] of this.fences) if (expiry <= now) this.fences.delete(k);
    }
  }

  async put(state: ArmedSwitch, fence: number): Promise<boolean> {
    if (this.fenceNow(state.key) !== fence) return false;
    this.armed.set(state.key, { ...state });
    return true;
  }

  async heartbeat(key: string, now: number, marginMs: number): Promise<SwitchDeadline | null> {
    const s = this.armed.get(key);
    if (!s) return null;
    s.heartbeatAt = now;
    s.fireAt = deadline(now, s.timeoutMs, s.validUntil, marginMs);
    return { fireAt: s.fireAt, timeoutMs: s.timeoutMs, validUntil: s.validUntil, cancels: s.cancels.length };
  }

  async remove(key: string): Promise<boolean> {
    this.move(key);
    return this.armed.delete(key);
  }

  async takeDue(now: number, max: number): Promise<ArmedSwitch[]> {
    const due: ArmedSwitch[] = [];
    for (const s of this.armed.values()) if (s.fireAt <= now) due.push(s);
    due.sort((a, b) => a.fireAt - b.fireAt);
    const taken = due.slice(0, max);
    for (const s of taken) {
      this.armed.delete(s.key);
      this.move(s.key);
    }
    return taken;
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

// KEYS: fence, state, deadline hash, due set, names. ARGV: fence read, state JSON, ttl, fireAt, key,
// timeoutMs, validUntil, cancels, heartbeatAt, name, fence ttl.
const PUT = `
local f = tonumber(redis.call('GET', KEYS[1]) or '0')
if f ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('HSET', KEYS[3], 'timeoutMs', ARGV[6], 'validUntil', ARGV[7], 'cancels', ARGV[8], 'heartbeatAt', ARGV[9])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[10])
redis.call('PEXPIRE', KEYS[5], ARGV[3])
if f > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[11]) end
return 1`;

// KEYS: deadline hash, due set. ARGV: now, margin, key. Only a switch still in the due set (armed,
// not taken) is moved; XX never adds one back.
const HEARTBEAT = `
local m = redis.call('HMGET', KEYS[1], 'timeoutMs', 'validUntil', 'cancels')
if not m[1] or not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return false end
local now = tonumber(ARGV[1])
local fireAt = math.min(now + tonumber(m[1]), tonumber(m[2]) - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[2], 'XX', fireAt, ARGV[3])
redis.call('HSET', KEYS[1], 'heartbeatAt', ARGV[1])
return {tostring(fireAt), m[1], m[2], m[3]}`;

// KEYS: state, deadline hash, due set, names, fence. ARGV: key, name, fence ttl.
const REMOVE = `
local armed = redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('INCR', KEYS[5])
redis.call('PEXPIRE', KEYS[5], ARGV[3])
return armed`;

// KEYS: due set. ARGV: now, max, key prefix, fence ttl. Returns state, fireAt, heartbeatAt per switch taken.
const TAKE_DUE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for i = 1, #due, 2 do
  local key = due[i]
  redis.call('ZREM', KEYS[1], key)
  local state = redis.call('GET', ARGV[3] .. 'switch:' .. key)
  local hb = redis.call('HGET', ARGV[3] .. 'switchdl:' .. key, 'heartbeatAt')
  redis.call('DEL', ARGV[3] .. 'switch:' .. key, ARGV[3] .. 'switchdl:' .. key)
  redis.call('INCR', ARGV[3] .. 'switchfence:' .. key)
  redis.call('PEXPIRE', ARGV[3] .. 'switchfence:' .. key, ARGV[4])
  if state then
    out[#out + 1] = state
    out[#out + 1] = due[i + 1]
    out[#out + 1] = hb or due[i + 1]
  end
end
return out`;

/** The scripts as commands of the client (EVALSHA: a heartbeat sends its keys and numbers, not the script). */
type Scripted = Record<'switchPut' | 'switchHeartbeat' | 'switchRemove' | 'switchTakeDue', (numberOfKeys: number, ...keysThenArgs: Array<string | number>) => Promise<unknown>>;

export class RedisSwitchStore implements SwitchStore {
  private readonly scripts: Scripted;

  constructor(
    private readonly redis: RedisHandle,
    private readonly clock: () => number = Date.now,
  ) {
    redis.client.defineCommand('switchPut', { lua: PUT });
    redis.client.defineCommand('switchHeartbeat', { lua: HEARTBEAT });
    redis.client.defineCommand('switchRemove', { lua: REMOVE });
    redis.client.defineCommand('switchTakeDue', { lua: TAKE_DUE });
    this.scripts = redis.client as unknown as Scripted;
  }

  private key(kind: 'switch' | 'switchdl' | 'switchfence', key: string): string {
    return `${this.redis.prefix}${kind}:${key}`;
  }

  private get dueSet(): string {
    return `${this.redis.prefix}switches`;
  }

  /** The party's switch names, scored by when each stops counting (its cancels' validity). */
  private partyKey(party: string): string {
    return `${this.redis.prefix}switchnames:${party}`;
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

  async fence(key: string): Promise<number> {
    const text = await this.run(() => this.redis.client.get(this.key('switchfence', key)));
    return text === null ? 0 : Number(text);
  }

  async put(state: ArmedSwitch, fence: number): Promise<boolean> {
    const ttl = Math.max(1_000, state.validUntil + STATE_GRACE_MS - this.clock());
    const spec: SwitchSpec = { key: state.key, party: state.party, sessionId: state.sessionId, name: state.name, cancels: state.cancels, timeoutMs: state.timeoutMs, validUntil: state.validUntil };
    const keys = [this.key('switchfence', state.key), this.key('switch', state.key), this.key('switchdl', state.key), this.dueSet, this.partyKey(state.party)];
    const args = [fence, JSON.stringify(spec), ttl, state.fireAt, state.key, state.timeoutMs, state.validUntil, state.cancels.length, state.heartbeatAt, state.name, FENCE_TTL_MS];
    const written = await this.run(() => this.scripts.switchPut(keys.length, ...keys, ...args));
    return written === 1;
  }

  async heartbeat(key: string, now: number, marginMs: number): Promise<SwitchDeadline | null> {
    const answer = (await this.run(() => this.scripts.switchHeartbeat(2, this.key('switchdl', key), this.dueSet, now, marginMs, key))) as string[] | null;
    if (!answer) return null;
    const [fireAt, timeoutMs, validUntil, cancels] = answer.map(Number) as [number, number, number, number];
    return { fireAt, timeoutMs, validUntil, cancels };
  }

  async namesOf(party: string, now: number): Promise<string[]> {
    // A fired switch's name leaves the set when its validity ends (≤ a minute): a fleet's bound is that much stricter.
    return this.run(async () => {
      await this.redis.client.zremrangebyscore(this.partyKey(party), '-inf', now);
      return this.redis.client.zrange(this.partyKey(party), '0', '-1');
    });
  }

  async remove(key: string): Promise<boolean> {
    const [party, name] = splitKey(key);
    const keys = [this.key('switch', key), this.key('switchdl', key), this.dueSet, this.partyKey(party), this.key('switchfence', key)];
    const armed = await this.run(() => this.scripts.switchRemove(keys.length, ...keys, key, name, FENCE_TTL_MS));
    return armed === 1;
  }

  async takeDue(now: number, max: number): Promise<ArmedSwitch[]> {
    const flat = (await this.run(() => this.scripts.switchTakeDue(1, this.dueSet, now, max, this.redis.prefix, FENCE_TTL_MS))) as string[];
    const taken: ArmedSwitch[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      const spec = JSON.parse(flat[i]!) as SwitchSpec & Partial<ArmedSwitch>;
      taken.push({ ...spec, fireAt: Number(flat[i + 1]), heartbeatAt: Number(flat[i + 2]) });
    }
    return taken;
  }
}

/** `<party>\n<name>` (dead-mans-switch.ts keyOf) back into its parts; a party id holds no newline. */
function splitKey(key: string): [string, string] {
  const at = key.indexOf('\n');
  return [key.slice(0, at), key.slice(at + 1)];
}
