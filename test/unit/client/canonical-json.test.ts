// canonicalJson on values whose members are not in sorted order (as PostgreSQL's jsonb keeps them:
// shorter keys first), through the native writer with a replacer list, against the independent
// auditor's writer: nested objects with different key sets, arrays of them, keys an object
// inherits (__proto__, toString) and odd characters; what is not plain JSON is refused as before.
import { describe, expect, it } from 'vitest';
import { canonicalJson, leafText } from '../../../packages/client/src/verify/scheme.js';
import { canonical } from '../../support/independent-verifier.js';

/** A value with members in a shuffled order, drawn from a seed. */
function draw(seed: number, depth = 0): unknown {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const keys = ['a', 'price', 'legs', 'b', 'zz', 'Z', 'é', 'key"q', 'toString', 'valueOf', 'x\u0001', '10', '2', 'size', 'market'];
  const one = (d: number): unknown => {
    const r = next();
    if (d > 3 || r < 0.3) return [() => Math.floor(next() * 1e6) - 5e5, () => `s${next()}`, () => null, () => next() < 0.5][Math.floor(next() * 4)]!();
    if (r < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => one(d + 1));
    const o: Record<string, unknown> = {};
    for (const k of [...keys].sort(() => next() - 0.5).slice(0, Math.floor(next() * 6))) o[k] = one(d + 1);
    return o;
  };
  return one(depth);
}

describe('canonicalJson', () => {
  it('equals the independent writer on 2 000 drawn values with members in any order', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const v = draw(seed);
      expect([seed, canonicalJson(v)]).toEqual([seed, canonical(v)]);
    }
  });

  it('jsonb order (shorter keys first) and keys met in some objects only', () => {
    const v = JSON.parse('{"ts": "t", "seq": 3, "kind": "engine.order_filled", "payload": {"legs": [{"fee": "1", "side": "buy", "party": "p"}, {"party": "q", "role": "maker"}], "price": "60000"}}');
    expect(canonicalJson(v)).toBe('{"kind":"engine.order_filled","payload":{"legs":[{"fee":"1","party":"p","side":"buy"},{"party":"q","role":"maker"}],"price":"60000"},"seq":3,"ts":"t"}');
    expect(leafText(v)).toBe(canonicalJson(v));
  });

  it('a __proto__ or toString member, and an undefined one', () => {
    const parsed = JSON.parse('{"b": {"__proto__": {"x": 1}}, "a": {"toString": "t"}, "c": {}}');
    expect(canonicalJson(parsed)).toBe(canonical(parsed));
    expect(canonicalJson(parsed)).toBe('{"a":{"toString":"t"},"b":{"__proto__":{"x":1}},"c":{}}');
    expect(canonicalJson({ b: 1, a: undefined, c: [undefined] })).toBe('{"b":1,"c":[null]}');
  });

  it('refuses NaN, Infinity and what JSON has no form for, in any order', () => {
    for (const bad of [{ b: 1, a: NaN }, { b: 1, a: Infinity }, { b: 1, a: () => 1 }, { b: 1, a: 1n }]) expect(() => canonicalJson(bad)).toThrow(TypeError);
  });
});
