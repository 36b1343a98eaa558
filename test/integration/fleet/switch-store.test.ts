// The dead man's switch store's two promises (src/contracts/switch-store.ts, docs/adr/0200), on both
// implementations: the in-process one and Redis (real, a key prefix of its own). Fenced: a disarm
// or a take for firing moves the fence, and an arm that read the fence before is not written; a
// heartbeat never brings back a switch disarmed or taken. O(1) heartbeats: a heartbeat of a switch
// of 200 cancels writes a few hundred bytes to Redis, never the ~36 KB switch.
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import { MemorySwitchStore, RedisSwitchStore } from '../../../src/fleet/switch-store.js';
import { RedisHandle } from '../../../src/fleet/redis.js';
import type { ArmedSwitch, SwitchStore } from '../../../src/contracts/switch-store.js';
import { fleetServices, REDIS_URL, uniqueName } from '../../support/fleet.js';

const redisUp = await fleetServices({ redis: true });
const handles: RedisHandle[] = [];
afterAll(async () => {
  for (const h of handles) await h.close();
});

function redisHandle(prefix: string): RedisHandle {
  const h = new RedisHandle(REDIS_URL, prefix, new Registry(), pino({ level: 'silent' }));
  handles.push(h);
  return h;
}

const NOW = Date.now();
const party = 'trader::' + 'ab'.repeat(32);
function state(name: string, cancels = 1, fireAt = NOW + 5_000): ArmedSwitch {
  return {
    key: `${party}\n${name}`,
    party,
    sessionId: 'sess-1',
    name,
    cancels: Array.from({ length: cancels }, (_, i) => ({ orderId: `order-${i}-${'x'.repeat(20)}`, sig: `${NOW + 20_000}.${'f'.repeat(128)}` })),
    timeoutMs: 5_000,
    heartbeatAt: NOW,
    validUntil: NOW + 50_000,
    fireAt,
  };
}

const stores: Array<[string, () => SwitchStore, boolean]> = [
  ['in process', () => new MemorySwitchStore(), true],
  ['Redis', () => new RedisSwitchStore(redisHandle(`${uniqueName('swstore')}:`)), redisUp],
];

describe.each(stores)('switch store (%s)', (_name, make, available) => {
  it.skipIf(!available)('an arm that read the fence before a disarm is not written', async () => {
    const store = make();
    const s = state('a');
    const fence = await store.fence(s.key);
    expect(await store.put(s, fence)).toBe(true);
    // An arm begins (reads the fence), a disarm is answered, the arm ends: nothing armed.
    const inFlight = await store.fence(s.key);
    expect(await store.remove(s.key)).toBe(true);
    expect(await store.put({ ...s, fireAt: NOW + 9_000 }, inFlight)).toBe(false);
    expect(await store.takeDue(NOW + 60_000, 10)).toEqual([]);
    expect(await store.heartbeat(s.key, NOW, 3_000)).toBeNull();
    // An arm that begins after the disarm arms.
    expect(await store.put(s, await store.fence(s.key))).toBe(true);
    expect(await store.remove(s.key)).toBe(true);
    expect(await store.remove(s.key)).toBe(false);
  });

  it.skipIf(!available)('a heartbeat moves only the deadline of a switch still armed; a taken switch stays taken', async () => {
    const store = make();
    const s = state('b', 3, NOW + 1_000);
    expect(await store.put(s, await store.fence(s.key))).toBe(true);
    const moved = await store.heartbeat(s.key, NOW + 500, 3_000);
    expect(moved).toEqual({ fireAt: NOW + 5_500, timeoutMs: 5_000, validUntil: NOW + 50_000, cancels: 3 });
    expect(await store.takeDue(NOW + 5_000, 10)).toEqual([]);
    // Never past its cancels' validity minus the margin.
    expect((await store.heartbeat(s.key, NOW + 44_000, 3_000))!.fireAt).toBe(NOW + 47_000);
    const fence = await store.fence(s.key);
    const [taken] = await store.takeDue(NOW + 47_000, 10);
    expect(taken).toMatchObject({ key: s.key, fireAt: NOW + 47_000, heartbeatAt: NOW + 44_000, cancels: s.cancels });
    // Taken to fire: a heartbeat, an arm that began before, a disarm cannot bring it back or claim it.
    expect(await store.heartbeat(s.key, NOW + 47_001, 3_000)).toBeNull();
    expect(await store.put(s, fence)).toBe(false);
    expect(await store.remove(s.key)).toBe(false);
    expect(await store.takeDue(NOW + 99_000, 10)).toEqual([]);
  });

  it.skipIf(!available)('due switches are taken most overdue first, each once', async () => {
    const store = make();
    for (const [name, at] of [['late', NOW + 300], ['early', NOW + 100], ['later', NOW + 900]] as const) {
      const s = state(name, 1, at);
      await store.put(s, await store.fence(s.key));
    }
    expect((await store.takeDue(NOW + 500, 1)).map((s) => s.name)).toEqual(['early']);
    expect((await store.takeDue(NOW + 500, 10)).map((s) => s.name)).toEqual(['late']);
    expect((await store.takeDue(NOW + 1_000, 10)).map((s) => s.name)).toEqual(['later']);
  });
});

describe.skipIf(!redisUp)('switch store in Redis: O(1) heartbeats', () => {
  it('100 heartbeats of a switch of 200 cancels write under 1 KB each (the switch alone is ~36 KB)', async () => {
    const handle = redisHandle(`${uniqueName('swbytes')}:`);
    const store = new RedisSwitchStore(handle);
    const s = state('big', 200);
    expect(JSON.stringify(s).length).toBeGreaterThan(30_000);
    expect(await store.put(s, await store.fence(s.key))).toBe(true);
    const socket = handle.client.stream;
    const before = socket.bytesWritten;
    const read = socket.bytesRead;
    for (let i = 0; i < 100; i++) expect(await store.heartbeat(s.key, NOW + i, 3_000)).not.toBeNull();
    const written = socket.bytesWritten - before;
    expect(written).toBeLessThan(100_000);
    expect(socket.bytesRead - read).toBeLessThan(100_000);
    await store.remove(s.key);
  });
});
