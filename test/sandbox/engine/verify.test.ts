import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { isoTime } from '../../../sandbox/engine/event-log.js';
import { ThreadPoolVerifier, VerifyPool } from '../../../sandbox/engine/verify-pool.js';

function keyPair(): { hex: string; sig: (m: Buffer) => string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { hex: der.subarray(der.length - 32).toString('hex'), sig: (m) => sign(null, m, privateKey).toString('hex') };
}

const pool = new VerifyPool(1);
afterAll(() => pool.close());

describe.each([
  ['thread pool (default)', new ThreadPoolVerifier()],
  ['worker threads', pool],
] as const)('signature verifier: %s', (_name, v) => {
  const k = keyPair();
  const other = keyPair();
  const msg = Buffer.from('POST\n/v1/orders\n1790000000000\n{"a":1}');
  const good = k.sig(msg);

  it('accepts a valid signature, repeatedly (cached key)', async () => {
    expect(await v.verify(k.hex, msg, good)).toBe(true);
    expect(await v.verify(k.hex, msg, good)).toBe(true);
  });

  it('rejects a wrong key, a wrong message, a flipped signature and malformed input', async () => {
    const flipped = (good[0] === '0' ? '1' : '0') + good.slice(1);
    const results = await Promise.all([
      v.verify(other.hex, msg, good),
      v.verify(k.hex, Buffer.from('POST\n/v1/orders\n1790000000001\n{"a":1}'), good),
      v.verify(k.hex, msg, flipped),
      v.verify(k.hex.slice(2), msg, good),
      v.verify(k.hex, msg, good.slice(2)),
      v.verify('zz'.repeat(32), msg, good),
    ]);
    expect(results).toEqual([false, false, false, false, false, false]);
  });

  it('answers concurrent checks each with its own verdict', async () => {
    const msgs = Array.from({ length: 40 }, (_, i) => Buffer.from(`m${i}`));
    const sigs = msgs.map((m, i) => (i % 3 === 0 ? other.sig(m) : k.sig(m)));
    const out = await Promise.all(msgs.map((m, i) => v.verify(k.hex, m, sigs[i]!)));
    expect(out).toEqual(msgs.map((_, i) => i % 3 !== 0));
  });
});

describe('isoTime', () => {
  it('equals Date#toISOString, also across repeated and changing ms', () => {
    for (const ms of [0, 1, 1, 1_790_000_000_123, 1_790_000_000_123, 1_790_000_000_124, 5]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
