// The fleet's shared state keeps two Redis connections (src/fleet/shared-state.ts): the replay
// memory, rate limits and claims on one, the dead man's switches and the faucet lock on the
// other. ioredis answers one connection's commands in order, so on one connection a check sent
// after a large switch write would wait for it; on two, it is answered while the other connection
// is still busy.
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

  it('answers the replay memory and rate limits while the bulk connection is still busy', async () => {
    const prefix = `${uniqueName('redis2')}:`;
    shared = createSharedState(loadConfig({ REDIS_URL, REDIS_PREFIX: prefix }), new Registry(), pino({ level: 'silent' }));
    expect(shared).not.toBeNull();
    const { redis, bulk } = shared!;
    expect(redis.client).not.toBe(bulk.client);
    await Promise.all([redis.client.ping(), bulk.client.ping()]);
    const order: string[] = [];
    // The bulk connection held busy for 400 ms by the server (a blocking pop of an empty list,
    // under the 500 ms command timeout), as a large switch write holds it while it is sent: a
    // small command on the urgent connection is answered meanwhile. On one connection it would
    // wait behind the pop. (A 4 MB write served here before, but on a loaded machine its transfer
    // could finish before the small command was even read.)
    const bulkDone = (): number => order.push('bulk');
    const busy = bulk.client.blpop(`${prefix}empty`, 0.4).then(bulkDone, bulkDone);
    const small = redis.client.ping().then(() => order.push('urgent'));
    await Promise.all([busy, small]);
    expect(order).toEqual(['urgent', 'bulk']);
  });
});
