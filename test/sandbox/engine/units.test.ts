import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Accounts } from '../../../sandbox/engine/accounts.js';
import { batchRoot, canonicalJson, canonicalJsonSlow, isCanonicalShape, leafHash, MerkleAccumulator, merkleRoot, nodeHash, ZERO_ROOT } from '../../../sandbox/engine/commitments.js';
import { formatDec, parseDec } from '../../../sandbox/engine/decimal.js';
import { buildMarket, DEFAULT_MARKETS, priceOnGrid, sizeOnGrid } from '../../../sandbox/engine/markets.js';
import { OrderBook } from '../../../sandbox/engine/orderbook.js';
import { isHit } from '../../../sandbox/engine/triggers.js';

const d = (s: string): bigint => parseDec(s)!;

describe('decimal', () => {
  it('parses 0..10 decimals and rejects everything else', () => {
    expect(parseDec('0.5')).toBe(5_000_000_000n);
    expect(parseDec('65000')).toBe(650_000_000_000_000n);
    expect(parseDec('-0.5')).toBe(-5_000_000_000n);
    expect(parseDec('0.0000000001')).toBe(1n);
    for (const bad of ['', '1e5', '1E5', 'NaN', 'Infinity', '.5', '5.', '0.00000000001', '+1', ' 1', '1 ', '0x10', '1,5', '--1']) {
      expect(parseDec(bad), bad).toBeNull();
    }
    for (const bad of [1, 0.5, null, undefined, true, {}, []]) expect(parseDec(bad)).toBeNull();
  });

  it('formats exactly 10 decimals', () => {
    expect(formatDec(0n)).toBe('0.0000000000');
    expect(formatDec(-5_000_000_000n)).toBe('-0.5000000000');
    expect(formatDec(d('65000'))).toBe('65000.0000000000');
    expect(formatDec(-1n)).toBe('-0.0000000001');
    expect(formatDec(d('123456789.0123456789'))).toBe('123456789.0123456789');
  });

  it('formats like the division-based reference at every digit-count boundary and at random', () => {
    const reference = (v: bigint): string => {
      const a = v < 0n ? -v : v;
      return `${v < 0n ? '-' : ''}${a / 10n ** 10n}.${(a % 10n ** 10n).toString().padStart(10, '0')}`;
    };
    const values: bigint[] = [0n];
    for (let k = 0n; k <= 30n; k++) for (const v of [10n ** k - 1n, 10n ** k, 10n ** k + 1n]) values.push(v, -v);
    let x = 0x2545f4914f6cdd1dn;
    for (let i = 0; i < 2000; i++) {
      x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
      values.push((x >> BigInt(i % 60)) * (i % 2 === 0 ? 1n : -1n));
    }
    for (const v of values) expect(formatDec(v), String(v)).toBe(reference(v));
  });
});

describe('grid rules', () => {
  const btc = buildMarket(DEFAULT_MARKETS[0]!); // szDecimals 4 → price ≤ 2 decimals
  const sol = buildMarket(DEFAULT_MARKETS[2]!); // szDecimals 2 → price ≤ 4 decimals

  it('sizes are positive multiples of 10^-szDecimals', () => {
    expect(sizeOnGrid(btc, d('0.0001'))).toBe(true);
    expect(sizeOnGrid(btc, d('0.00015'))).toBe(false);
    expect(sizeOnGrid(btc, 0n)).toBe(false);
    expect(sizeOnGrid(sol, d('1.23'))).toBe(true);
    expect(sizeOnGrid(sol, d('1.234'))).toBe(false);
  });

  it('prices: integers always, else ≤5 significant figures and ≤ 6−szDecimals decimals', () => {
    expect(priceOnGrid(btc, d('123456'))).toBe(true);
    expect(priceOnGrid(btc, d('65000.5'))).toBe(false); // 6 significant figures
    expect(priceOnGrid(btc, d('6500.5'))).toBe(true);
    expect(priceOnGrid(btc, d('1.23'))).toBe(true);
    expect(priceOnGrid(btc, d('1.234'))).toBe(false); // 3 decimals > 2
    expect(priceOnGrid(sol, d('1.234'))).toBe(true);
    expect(priceOnGrid(sol, d('0.0012'))).toBe(true);
    expect(priceOnGrid(sol, d('0.00123'))).toBe(false); // 5 decimals > 4
    expect(priceOnGrid(sol, d('12.3456'))).toBe(false); // 6 significant figures
    expect(priceOnGrid(sol, d('12.3450'))).toBe(true); // trailing zero is not significant
    expect(priceOnGrid(sol, 0n)).toBe(false);
  });
});

describe('order book', () => {
  it('keeps price-time priority and aggregates levels', () => {
    const b = new OrderBook('X');
    b.add({ orderId: 'a', side: 'sell', price: 101n, remaining: 1n });
    b.add({ orderId: 'b', side: 'sell', price: 100n, remaining: 2n });
    b.add({ orderId: 'c', side: 'sell', price: 100n, remaining: 3n });
    b.add({ orderId: 'x', side: 'buy', price: 99n, remaining: 5n });
    b.add({ orderId: 'y', side: 'buy', price: 98n, remaining: 5n });
    expect(b.best('sell')?.orderId).toBe('b');
    expect(b.depth('sell', 10)).toEqual([[100n, 5n], [101n, 1n]]);
    expect(b.depth('buy', 1)).toEqual([[99n, 5n]]);
    b.reduce('b', 2n);
    expect(b.best('sell')?.orderId).toBe('c');
    b.reduce('c', 1n);
    expect(b.depth('sell', 10)).toEqual([[100n, 2n], [101n, 1n]]);
    b.remove('c');
    expect(b.best('sell')?.orderId).toBe('a');
    expect([...b.iterate('buy')].map((o) => o.orderId)).toEqual(['x', 'y']);
  });
});

describe('accounts', () => {
  it('averages entry price rounding half away from zero at 10 decimals', () => {
    const btc = buildMarket(DEFAULT_MARKETS[0]!);
    const a = new Accounts(() => 20);
    let n = 0;
    const args = { party: 'p', market: btc, feeRate: 0n, at: 't', newPositionId: () => `pos${++n}` };
    a.applyFill({ ...args, side: 'buy', size: d('0.1'), price: d('60000') });
    a.applyFill({ ...args, side: 'buy', size: d('0.2'), price: d('60001') });
    // (6000 + 12000.2) / 0.3 = 60000.666666…
    expect(formatDec(a.position('p', 'BTC-PERP')!.entryPrice)).toBe('60000.6666666667');
    const legs = a.applyFill({ ...args, side: 'sell', size: d('0.3'), price: d('60000') });
    expect(legs).toHaveLength(1);
    // (60000 − 60000.6666666667) × 0.3 = −0.20000000001 → −0.2000000000
    expect(formatDec(legs[0]!.position.realizedPnl)).toBe('-0.2000000000');
    expect(a.position('p', 'BTC-PERP')).toBeUndefined();
  });
});

describe('triggers', () => {
  it('fire on the right side of the trigger price', () => {
    expect(isHit('tp', 1n, 100n, 100n)).toBe(true);
    expect(isHit('tp', 1n, 100n, 99n)).toBe(false);
    expect(isHit('sl', 1n, 100n, 100n)).toBe(true);
    expect(isHit('sl', 1n, 100n, 101n)).toBe(false);
    expect(isHit('tp', -1n, 100n, 99n)).toBe(true);
    expect(isHit('tp', -1n, 100n, 101n)).toBe(false);
    expect(isHit('sl', -1n, 100n, 101n)).toBe(true);
    expect(isHit('sl', -1n, 100n, 99n)).toBe(false);
  });
});

describe('merkle', () => {
  const sha = (...parts: Buffer[]): Buffer => {
    const h = createHash('sha256');
    for (const p of parts) h.update(p);
    return h.digest();
  };
  it('canonical JSON sorts keys recursively', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: null, y: 'x' }], c: true } })).toBe('{"a":{"c":true,"d":[2,{"y":"x","z":null}]},"b":1}');
  });
  it('hashes leaves and nodes with domain prefixes, promoting an odd node', () => {
    const [l1, l2, l3] = ['a', 'b', 'c'].map((s) => sha(Buffer.from([0]), Buffer.from(s))) as [Buffer, Buffer, Buffer];
    expect(leafHash('a')).toEqual(l1);
    const expected = sha(Buffer.from([1]), sha(Buffer.from([1]), l1, l2), l3).toString('hex');
    expect(merkleRoot([l1, l2, l3])).toBe(expected);
    expect(merkleRoot([l1])).toBe(l1.toString('hex'));
    expect(merkleRoot([])).toBe(ZERO_ROOT);
    expect(nodeHash(l1, l2)).toEqual(sha(Buffer.from([1]), l1, l2));
    const r = 'ab'.repeat(32);
    expect(batchRoot([r])).toBe(sha(Buffer.from([0]), Buffer.from(r, 'hex')).toString('hex'));
  });
});

describe('canonical JSON fast path', () => {
  it('matches the general writer on sorted and unsorted trees', () => {
    const samples: unknown[] = [
      { a: 1, b: [{ c: 'x', d: null }], e: { f: true } },
      { b: 1, a: 2 },
      { a: { z: 1, y: 2 } },
      { a: undefined, b: 1 },
      { '10': 1, '9': 2 },
      [1, 'two', { b: 'u\u2028"', a: -0 }],
      { a: Number.NaN, b: Infinity },
      'plain',
      null,
    ];
    for (const s of samples) expect(canonicalJson(s)).toBe(canonicalJsonSlow(s));
    expect(isCanonicalShape({ b: 1, a: 2 })).toBe(false);
    expect(isCanonicalShape({ a: 1, b: { c: 2 } })).toBe(true);
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });
});

describe('streaming merkle', () => {
  it('equals the level-by-level tree for every size up to 70', () => {
    const leaves = Array.from({ length: 70 }, (_, i) => leafHash(`leaf ${i}`));
    for (let n = 0; n <= 70; n++) {
      const acc = new MerkleAccumulator();
      for (const l of leaves.slice(0, n)) acc.push(l);
      expect(acc.root(), `n=${n}`).toBe(merkleRoot(leaves.slice(0, n)));
      expect(acc.count).toBe(n);
    }
  });
});
