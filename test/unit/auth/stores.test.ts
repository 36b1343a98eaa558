import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../../src/auth/replay-cache.js';
import { SessionKeys } from '../../../src/auth/session-keys.js';

const KEY = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';

describe('ReplayCache', () => {
  it('refuses a second use and forgets entries once their timestamp aged past the horizon', () => {
    const c = new ReplayCache(60_000);
    expect(c.remember('s', 'sig-1', 1_000_000, 1_000_000)).toBe(true);
    expect(c.remember('s', 'sig-1', 1_000_000, 1_000_500)).toBe(false);
    expect(c.remember('other', 'sig-1', 1_000_000, 1_000_500)).toBe(true);
    // 61 s later the entry is swept; its timestamp could no longer pass the ±30 s window anyway.
    expect(c.remember('s', 'sig-1', 1_000_000, 1_061_001)).toBe(true);
  });

  it('stays within its entry bound', () => {
    const c = new ReplayCache(60_000, 3);
    for (let i = 0; i < 5; i++) expect(c.remember('s', `sig-${i}`, 0, 0)).toBe(true);
    // The two oldest were evicted to keep three entries; the newest are still refused.
    expect(c.remember('s', 'sig-4', 0, 0)).toBe(false);
    expect(c.remember('s', 'sig-0', 0, 0)).toBe(true);
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
