import { describe, expect, it } from 'vitest';
import { MemoryReplayGuard, ReplayMemoryFull } from '../../../src/auth/replay-guard.js';
import { SessionKeys } from '../../../src/auth/session-keys.js';

const KEY = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';

describe('MemoryReplayGuard', () => {
  it('refuses a second use and forgets a key once its time to live has passed', async () => {
    let now = 1_000_000;
    const g = new MemoryReplayGuard(10, () => now);
    expect(await g.firstUse('a', 31_000)).toBe(true);
    expect(await g.firstUse('a', 31_000)).toBe(false);
    expect(await g.firstUse('b', 31_000)).toBe(true);
    now += 31_001;
    expect(await g.firstUse('a', 31_000)).toBe(true);
  });

  it('when full, refuses new keys instead of evicting unexpired ones (an evicted signature could be replayed)', async () => {
    let now = 0;
    const g = new MemoryReplayGuard(3, () => now);
    for (let i = 0; i < 3; i++) expect(await g.firstUse(`sig-${i}`, 60_000)).toBe(true);
    await expect(g.firstUse('sig-3', 60_000)).rejects.toBeInstanceOf(ReplayMemoryFull);
    // Every remembered key is still refused: nothing was forgotten to make room.
    for (let i = 0; i < 3; i++) expect(await g.firstUse(`sig-${i}`, 60_000)).toBe(false);
    expect(g.size).toBe(3);
    // Expired keys are swept when room is needed.
    now = 60_001;
    expect(await g.firstUse('sig-3', 60_000)).toBe(true);
    expect(g.size).toBe(1);
  });

  it('firstUseMany answers each key as firstUse would, in order, a key repeated in one call included', async () => {
    const g = new MemoryReplayGuard(10, () => 0);
    expect(await g.firstUse('a', 31_000)).toBe(true);
    const entry = (key: string) => ({ key, ttlMs: 31_000, signedAtMs: 0 });
    expect(await g.firstUseMany([entry('a'), entry('b'), entry('c'), entry('b')])).toEqual([false, true, true, false]);
    expect(await g.firstUse('c', 31_000)).toBe(false);
  });
});

describe('SessionKeys without a database', () => {
  it('learns sessions from ISO or millisecond expiries and refuses malformed keys', async () => {
    const s = new SessionKeys(null);
    expect(s.add('a', 'p', KEY, '2030-01-01T00:00:00.000Z')).toBe(true);
    expect(s.add('b', 'p', KEY, 1_900_000_000_000)).toBe(true);
    expect(s.add('c', 'p', 'zz', 1)).toBe(false);
    expect(s.add('d', 'p', KEY, 'not a date')).toBe(false);
    expect((await s.get('a'))?.expiresAtMs).toBe(Date.parse('2030-01-01T00:00:00.000Z'));
    expect((await s.get('b'))?.party).toBe('p');
    expect(await s.get('c')).toBeNull();
    expect(s.size).toBe(2);
  });

  it('evicts expired sessions first when full', async () => {
    const s = new SessionKeys(null, 2);
    s.add('old', 'p', KEY, Date.now() - 1);
    s.add('live', 'p', KEY, Date.now() + 60_000);
    s.add('new', 'p', KEY, Date.now() + 60_000);
    expect(await s.get('old')).toBeNull();
    expect(await s.get('live')).not.toBeNull();
    expect(await s.get('new')).not.toBeNull();
  });
});
