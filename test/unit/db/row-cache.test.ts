// The kept list rows (src/db/json/row-cache.ts): exact versions only, bounded bytes, 0 keeps nothing.
import { describe, expect, it } from 'vitest';
import { RowCache } from '../../../src/db/json/row-cache.js';

const row = (n: number, fill = 'x') => Buffer.from(`{"v":"${fill.repeat(n)}"}`);

describe('RowCache', () => {
  it('answers only the version that was kept, and counts hits and misses', () => {
    const cache = new RowCache(1 << 20);
    cache.set('fills:10:0:777', row(3));
    expect(cache.get('fills:10:0:777')?.toString()).toBe('{"v":"xxx"}');
    expect(cache.get('fills:10:0:778')).toBeUndefined(); // same key, other version
    expect(cache.get('events:10:777')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 2, rows: 1 });
  });

  it('keeps at most maxBytes (row bytes and version text), least recently used out first', () => {
    const cache = new RowCache(1000);
    for (let i = 0; i < 20; i++) cache.set(`events:${i}:1`, row(90));
    const { bytes, rows } = cache.stats();
    expect(bytes).toBeLessThanOrEqual(1000);
    expect(rows).toBeLessThan(20);
    expect(cache.get('events:19:1')).toBeDefined();
    expect(cache.get('events:0:1')).toBeUndefined();
  });

  it('bound to another database, it empties itself before anything is served, and counts the change', () => {
    const cache = new RowCache(1000);
    cache.bind('2026-11-27 09:00:00+00');
    cache.set('fills:1:0:5', row(10));
    cache.bind('2026-11-27 09:00:00+00'); // the same server: kept
    expect(cache.get('fills:1:0:5')).toBeDefined();
    cache.bind('2026-11-27 10:00:00+00'); // restarted, restored, failed over: none of it is this one's
    expect(cache.get('fills:1:0:5')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ rows: 0, bytes: 0, databaseChanges: 1 });
  });

  it('with 0 bytes keeps nothing and is not enabled', () => {
    const cache = new RowCache(0);
    cache.set('fills:1:0:5', row(1));
    expect(cache.enabled).toBe(false);
    expect(cache.get('fills:1:0:5')).toBeUndefined();
    expect(cache.stats().bytes).toBe(0);
  });
});
