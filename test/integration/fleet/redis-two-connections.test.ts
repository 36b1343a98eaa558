// The fleet's shared state keeps two Redis connections (src/fleet/shared-state.ts): the replay
// memory, rate limits and claims on one, the dead man's switches and the faucet lock on the
// other. ioredis answers one connection's commands in order, so on one connection a check sent
// after a large switch write would wait for it; on two, it is answered while the write is still
// on its way.
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../../../src/config/env.js';
import { createSharedState, type SharedState } from '../../../src/fleet/shared-state.js';
import { fleetServices, REDIS_URL, uniqueName } from '../../support/fleet.js';

const available = await fleetServices({ redis: true });

describe.skipIf(!available)('two Redis connections', () => {
  let shared: SharedState | null = null;
  afterAll(async () => shared?.close());

  it('answers the replay memory and rate limits while a large bulk write is still being sent', async () => {
    const prefix = `${uniqueName('redis2')}:`;
    shared = createSharedState(loadConfig({ REDIS_URL, REDIS_PREFIX: prefix }), new Registry(), pino({ level: 'silent' }));
    expect(shared).not.toBeNull();
    const { redis, bulk } = shared!;
    expect(redis.client).not.toBe(bulk.client);
    await Promise.all([redis.client.ping(), bulk.client.ping()]);
    const order: string[] = [];
    const key = `${prefix}big`;
    // 4 MB for the bulk connection (answered, or past its command timeout on a busy machine),
    // then a small command on the urgent one.
    const bulkDone = (): number => order.push('bulk');
    const value = Buffer.alloc(4 * 1024 * 1024, 0x61);
    const big = bulk.client.set(key, value).then(bulkDone, bulkDone);
    const small = redis.client.ping().then(() => order.push('urgent'));
    await Promise.all([big, small]);
    expect(order).toEqual(['urgent', 'bulk']);
    await bulk.client.del(key);
  });
});
