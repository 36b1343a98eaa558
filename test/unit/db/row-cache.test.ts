// The kept list rows (src/db/json/row-cache.ts): exact versions only, bounded memory, 0 keeps nothing.
import { describe, expect, it } from 'vitest';
import { ROW_OVERHEAD_BYTES, RowCache } from '../../../src/db/json/row-cache.js';

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

  it('keeps at most maxBytes (row bytes, version text and the fixed cost of a row), least recently used out first', () => {
    const cache = new RowCache(3000);
    for (let i = 0; i < 20; i++) cache.set(`events:${i}:1`, row(90));
    const { bytes, rows } = cache.stats();
    expect(bytes).toBeLessThanOrEqual(3000);
    expect(rows).toBe(Math.floor(3000 / (row(90).length + 'events:19:1'.length + ROW_OVERHEAD_BYTES)));
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

  it('holds each row in memory of its own: rows given as slices of the shared Buffer pool keep no pool slab alive', () => {
    // A row made the usual way is a slice of the process's pool slab (64 KiB on Node 24), and other
    // allocations come between two rows kept: kept as given, each row would keep a whole slab alive.
    const cache = new RowCache(1 << 20);
    const versions: string[] = [];
    for (let i = 0; i < 300; i++) {
      const given = row(300, String(i % 10));
      expect(given.buffer.byteLength).toBeGreaterThan(given.length); // the premise: a slice of a larger slab
      cache.set(`fills:${i}:0:1`, given);
      versions.push(`fills:${i}:0:1`);
      Buffer.from(`{"other":"${'y'.repeat(3000)}"}`); // the rest of the process, filling the slab
    }
    const kept = versions.map((v) => cache.get(v)!);
    const held = new Set(kept.map((b) => b.buffer));
    const heldBytes = [...held].reduce((sum, ab) => sum + ab.byteLength, 0);
    expect(heldBytes).toBe(kept.reduce((sum, b) => sum + b.length, 0)); // exactly the rows' bytes
    expect(heldBytes).toBeLessThanOrEqual(cache.stats().bytes); // within what the bound counts
    expect(kept[0]!.toString()).toBe(row(300, '0').toString());
  });

  it('with 0 bytes keeps nothing and is not enabled', () => {
    const cache = new RowCache(0);
    cache.set('fills:1:0:5', row(1));
    expect(cache.enabled).toBe(false);
    expect(cache.get('fills:1:0:5')).toBeUndefined();
    expect(cache.stats().bytes).toBe(0);
  });
});
