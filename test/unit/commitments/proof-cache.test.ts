// The proof route's cache of verified answers (ADR 0063): an entry is used only with the identity
// it was made from and while fresh; least recently used entries go first when the bytes exceed the bound.
import { describe, expect, it } from 'vitest';
import { ProofCache } from '../../../src/commitments/proof-cache.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const body = (n: number, fill = 'x') => Buffer.from(fill.repeat(n));

describe('ProofCache', () => {
  it('answers only for the same identity, and forgets an entry whose identity changed', () => {
    const cache = new ProofCache({ maxBytes: 1_000, ttlMs: 60_000 });
    cache.set('a', 'id1', body(10));
    expect(cache.get('a', 'id1')?.toString()).toBe('x'.repeat(10));
    expect(cache.get('a', 'id2')).toBeNull();
    expect(cache.get('a', 'id1')).toBeNull(); // dropped on the mismatch
    expect(cache.totalBytes).toBe(0);
  });

  it('expires entries after the TTL', async () => {
    const clock = new VirtualClock(1_000);
    const cache = new ProofCache({ maxBytes: 1_000, ttlMs: 100, clock });
    cache.set('a', 'id', body(10));
    await clock.advance(99);
    expect(cache.get('a', 'id')).not.toBeNull();
    await clock.advance(1);
    expect(cache.get('a', 'id')).toBeNull();
    expect(cache.size).toBe(0);
  });

  it('bounded by bytes: evicts the least recently used first; never keeps a body larger than the bound', () => {
    const cache = new ProofCache({ maxBytes: 100, ttlMs: 60_000 });
    cache.set('a', 'i', body(40, 'a'));
    cache.set('b', 'i', body(40, 'b'));
    expect(cache.get('a', 'i')).not.toBeNull(); // a is now the most recent
    cache.set('c', 'i', body(40, 'c'));
    expect(cache.get('b', 'i')).toBeNull();
    expect(cache.get('a', 'i')?.toString()).toBe('a'.repeat(40));
    expect(cache.get('c', 'i')?.toString()).toBe('c'.repeat(40));
    expect(cache.totalBytes).toBe(80);
    cache.set('d', 'i', body(101));
    expect(cache.get('d', 'i')).toBeNull();
    cache.set('a', 'j', body(10)); // replacing an entry counts its bytes once
    expect(cache.totalBytes).toBe(50);
  });
});
