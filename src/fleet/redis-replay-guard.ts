// The signature replay memory in Redis: a signature is accepted once by the whole fleet.
// `SET key 1 NX PX ttl` is atomic, so two replicas receiving the same signed request at the same
// moment cannot both accept it. Fails closed: without Redis the replica cannot know whether another
// one accepted the signature, so it answers 503 `shared_state_unavailable` rather than risk a replay.
// Likewise when the key is not acknowledged by REDIS_WAIT_REPLICAS replicas in time: the signature is
// then refused (the client signs again), never accepted on a key a failover could lose.
//
// A memory that was lost (Redis restarted without persistence, FLUSHALL, the marker evicted) would
// accept again every signature it held (docs/adr/0155). So the memory carries a marker key, and
// every write checks it in the same script: a replica whose marker is gone or was replaced knows the
// memory was lost and refuses every signature timestamped before the moment it noticed plus the
// signing window (none of them can have been remembered by the new memory; each of them may have
// been accepted before). The window is recorded in the new marker, so every replica, and one started
// during the window, refuses the same signatures.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ReplayEntry, ReplayGuard } from '../contracts/replay-guard.js';
import { ReplayMemoryLostError, SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';

// Every signature of one call (one, or a batch's items): KEYS[1] the marker, KEYS[2..] the
// signatures' keys; ARGV[1] the marker this replica knows, ARGV[i] the ttl of KEYS[i]. {0, marker}
// when the marker is not the known one (nothing written), else {1, first use of KEYS[2] (1|0), of
// KEYS[3], …}.
const FIRST_USE_MANY = `
local m = redis.call('GET', KEYS[1])
if m ~= ARGV[1] then return {0, m or ''} end
local out = {1}
for i = 2, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'PX', ARGV[i], 'NX') then out[i] = 1 else out[i] = 0 end
end
return out`;

interface ScriptedClient {
  /** numberOfKeys first (the script takes any number of keys). */
  replayFirstUseMany(numberOfKeys: number, ...keysThenArgs: string[]): Promise<[number, ...Array<number | string>]>;
}

export interface ReplayMemoryStatus {
  /** Signatures timestamped before this are refused (the memory was lost); absent once past. */
  refusingSignedBefore?: string;
}

export class RedisReplayGuard implements ReplayGuard {
  /** The marker value this replica last saw; null before its first exchange. */
  private known: string | null = null;
  /** Signatures with a timestamp before this (ms) are refused. */
  private refuseBefore = 0;
  private readonly lost: Counter;
  private readonly refusing: Gauge;

  constructor(
    private readonly redis: RedisHandle,
    readonly windowMs: number,
    registry: Registry,
    private readonly logger: FastifyBaseLogger,
    private readonly clock: () => number = Date.now,
  ) {
    this.lost = new Counter({
      name: 'bff_replay_memory_lost_total',
      help: 'Times this replica found the signature replay memory in Redis lost (its marker gone or replaced); it then refuses older signatures for one signing window',
      registers: [registry],
    });
    // EVALSHA, with ioredis sending the script again when Redis does not have it (a restarted one).
    redis.client.defineCommand('replayFirstUseMany', { lua: FIRST_USE_MANY });
    this.refusing = new Gauge({
      name: 'bff_replay_memory_refusing',
      help: '1 while signatures timestamped before the replay memory was lost (plus the signing window) are refused with 503, else 0',
      registers: [registry],
      collect: () => this.refusing.set(this.refuseBefore > this.clock() ? 1 : 0),
    });
  }

  private get markerKey(): string {
    return `${this.redis.prefix}replay-memory`;
  }

  async firstUse(key: string, ttlMs: number, signedAtMs: number): Promise<boolean> {
    return (await this.firstUseMany([{ key, ttlMs, signedAtMs }]))[0]!;
  }

  /**
   * Many signatures in one script call and one WAIT for all (REDIS_WAIT_REPLICAS): a full batch's 50
   * are 2 round trips, not 100. `firstUse` is the same exchange for one.
   */
  async firstUseMany(entries: readonly ReplayEntry[]): Promise<boolean[]> {
    if (entries.length === 0) return [];
    let firsts: boolean[];
    try {
      this.redis.ensureConnected();
      const check = () => {
        for (const e of entries) this.refuseIfBeforeLoss(e.signedAtMs);
      };
      check();
      if (this.known === null) await this.sync(null);
      check();
      let answer = await this.writeMany(entries);
      if (answer[0] === 0) {
        await this.sync(String(answer[1]));
        check();
        answer = await this.writeMany(entries);
        if (answer[0] === 0) throw new Error('the replay memory marker changed twice in a row');
      }
      firsts = entries.map((_, i) => answer[i + 1] === 1);
      if (firsts.some((f) => f)) await this.redis.replicated();
    } catch (err) {
      if (err instanceof ReplayMemoryLostError) throw err;
      this.redis.failed('replay', 'fail_closed', err);
      throw new SharedStateUnavailableError('the signature replay memory (Redis) is unavailable; retry shortly');
    }
    this.redis.succeeded();
    return firsts;
  }

  /** One MGET for all (fails closed, as a write does). */
  async spent(keys: readonly string[]): Promise<boolean[]> {
    if (keys.length === 0) return [];
    let values: (string | null)[];
    try {
      this.redis.ensureConnected();
      values = await this.redis.client.mget(...keys.map((k) => `${this.redis.prefix}replay:${k}`));
    } catch (err) {
      this.redis.failed('replay', 'fail_closed', err);
      throw new SharedStateUnavailableError('the signature replay memory (Redis) is unavailable; retry shortly');
    }
    this.redis.succeeded();
    return values.map((v) => v !== null);
  }

  /** For /readyz: looks at the marker (a loss is noticed without traffic) and says what is refused. */
  async status(): Promise<ReplayMemoryStatus> {
    try {
      const marker = await this.redis.client.get(this.markerKey);
      if (this.known !== null && marker !== this.known) await this.sync(marker ?? '');
    } catch {
      // Redis's own status says it is unreachable.
    }
    return this.refuseBefore > this.clock() ? { refusingSignedBefore: new Date(this.refuseBefore).toISOString() } : {};
  }

  private refuseIfBeforeLoss(signedAtMs: number): void {
    if (signedAtMs < this.refuseBefore) throw new ReplayMemoryLostError(this.refuseBefore, this.clock());
  }

  private async writeMany(entries: readonly ReplayEntry[]): Promise<[number, ...Array<number | string>]> {
    const keys = [this.markerKey, ...entries.map((e) => `${this.redis.prefix}replay:${e.key}`)];
    const args = [this.known ?? '', ...entries.map((e) => String(Math.max(1, Math.ceil(e.ttlMs))))];
    return await (this.redis.client as unknown as ScriptedClient).replayFirstUseMany(keys.length, ...keys, ...args);
  }

  /**
   * Aligns on the marker Redis holds (`seen`: what the script found, '' when none). Without one it
   * writes one; a replica that knew another one has found the memory lost. The marker's value is
   * `<id>:<refuse signatures before, ms>`.
   */
  private async sync(seen: string | null): Promise<void> {
    const now = this.clock();
    const had = this.known;
    let marker = seen === null ? await this.redis.client.get(this.markerKey) : seen === '' ? null : seen;
    if (marker === null) {
      // Lost under this replica's eyes: from now. Never seen by this replica (its first exchange,
      // a fresh Redis or prefix): the memory may have been lost when the server started, so from
      // then (a server up for longer than the window refuses nothing).
      const from = had !== null ? now : now - uptimeMs(await this.redis.client.info('server'));
      await this.redis.client.set(this.markerKey, `${randomUUID()}:${from + this.windowMs}`, 'NX');
      await this.redis.replicated();
      marker = await this.redis.client.get(this.markerKey);
      if (marker === null) throw new Error('the replay memory marker vanished as it was written');
    }
    const lostNow = had !== null && marker !== had;
    const recorded = Number(marker.slice(marker.lastIndexOf(':') + 1)) || 0;
    this.refuseBefore = Math.max(this.refuseBefore, recorded, lostNow ? now + this.windowMs : 0);
    this.known = marker;
    if (lostNow) {
      this.lost.inc();
      this.logger.warn(
        { refusingSignedBefore: new Date(this.refuseBefore).toISOString() },
        'redis: the signature replay memory was lost (Redis restarted empty or was flushed): signatures timestamped before the loss plus the signing window are refused (503)',
      );
    } else if (this.refuseBefore > now) {
      this.logger.warn({ refusingSignedBefore: new Date(this.refuseBefore).toISOString() }, 'redis: the signature replay memory is new or was lost recently: older signatures are refused (503)');
    }
  }
}

/** Redis's `uptime_in_seconds`, as ms; its start is taken as late as it can be (the safe side). */
function uptimeMs(info: string): number {
  const s = /^uptime_in_seconds:(\d+)/m.exec(info);
  if (!s) throw new Error('INFO server has no uptime_in_seconds');
  return Number(s[1]) * 1_000;
}
