// The caches behind the markets and candle reads: one load shared by concurrent callers, the value
// reused for the TTL after it settled, failures never cached, a bounded number of keys.
import { describe, expect, it } from 'vitest';
import { KeyedTtlCache, TtlCache } from '../../../src/markets/ttl-cache.js';
import { VirtualClock } from '../../support/virtual-clock.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('TtlCache', () => {
  it('shares one load, keeps the value for the TTL, and does not cache a failure', async () => {
    const clock = new VirtualClock(0);
    let loads = 0;
    let fail = false;
    const cache = new TtlCache(async () => {
      loads++;
      if (fail) throw new Error('down');
      return loads;
    }, 1_000, clock);
    expect(await Promise.all([cache.get(), cache.get(), cache.get()])).toEqual([1, 1, 1]);
    await clock.advance(999);
    expect([await cache.get(), loads]).toEqual([1, 1]);
    await clock.advance(1);
    fail = true;
    await expect(cache.get()).rejects.toThrow('down');
    fail = false;
    expect([await cache.get(), loads]).toEqual([3, 3]);
  });
});

describe('KeyedTtlCache', () => {
  it('shares a load per key while it runs, reuses it for the TTL after it settled, then loads again', async () => {
    const clock = new VirtualClock(0);
    const cache = new KeyedTtlCache<string>(1_000, 10, clock);
    const first = deferred<string>();
    let loads = 0;
    const load = () => {
      loads++;
      return loads === 1 ? first.promise : Promise.resolve(`v${loads}`);
    };
    const a = cache.get('k', load);
    await clock.advance(5_000); // a slow load: still shared while in flight, whatever the clock says
    const b = cache.get('k', load);
    first.resolve('v1');
    expect([await a, await b, loads]).toEqual(['v1', 'v1', 1]);
    await clock.advance(999);
    expect([await cache.get('k', load), loads]).toEqual(['v1', 1]);
    await clock.advance(1);
    expect([await cache.get('k', load), loads]).toEqual(['v2', 2]);
    expect([await cache.get('other', load), loads]).toEqual(['v3', 3]);
  });

  it('drops a failed load at once and keeps at most maxKeys keys', async () => {
    const cache = new KeyedTtlCache<number>(60_000, 3);
    await expect(cache.get('bad', () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await Promise.resolve();
    expect(await cache.get('bad', async () => 7)).toBe(7);
    for (let i = 0; i < 10; i++) await cache.get(`k${i}`, async () => i);
    expect(cache.size).toBe(3);
    expect(await cache.get('k9', async () => -1)).toBe(9);
    expect(await cache.get('k0', async () => -1)).toBe(-1);
  });
});

describe('quote volume rounding', () => {
  it('rounds Σ price × size (20 places) half away from zero to 10 places', async () => {
    const { roundQuote } = await import('../../../src/markets/rolling-stats.js');
    const e10 = 10n ** 10n;
    expect(roundQuote(5n * e10 * e10 + 4n)).toBe(5n * e10); // 5.00000000000000000004
    expect(roundQuote(5n * e10 * e10 + e10 / 2n)).toBe(5n * e10 + 1n); // exactly half: away from zero
    expect(roundQuote(5n * e10 * e10 + e10 / 2n - 1n)).toBe(5n * e10);
    expect(roundQuote(-(5n * e10 * e10 + e10 / 2n))).toBe(-(5n * e10 + 1n));
  });
});
