// The signature replay memory in Redis: a signature is accepted once by the whole fleet.
// `SET key 1 NX PX ttl` is atomic, so two replicas receiving the same signed request at the same
// moment cannot both accept it. Fails closed: without Redis the replica cannot know whether another
// one accepted the signature, so it answers 503 `shared_state_unavailable` rather than risk a replay.
// Likewise when the key is not acknowledged by REDIS_WAIT_REPLICAS replicas in time: the signature is
// then refused (the client signs again), never accepted on a key a failover could lose.
import type { ReplayGuard } from '../contracts/replay-guard.js';
import { SharedStateUnavailableError } from './errors.js';
import type { RedisHandle } from './redis.js';

export class RedisReplayGuard implements ReplayGuard {
  constructor(private readonly redis: RedisHandle) {}

  async firstUse(key: string, ttlMs: number): Promise<boolean> {
    let answer: string | null;
    try {
      this.redis.ensureConnected();
      answer = await this.redis.client.set(`${this.redis.prefix}replay:${key}`, '1', 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX');
      // Accepted only once the replicas hold it too (REDIS_WAIT_REPLICAS): a failover must not
      // promote a replica that would accept the same signature again (docs/adr/0125).
      if (answer === 'OK') await this.redis.replicated();
    } catch (err) {
      this.redis.failed('replay', 'fail_closed', err);
      throw new SharedStateUnavailableError('the signature replay memory (Redis) is unavailable; retry shortly');
    }
    this.redis.succeeded();
    return answer === 'OK';
  }
}
