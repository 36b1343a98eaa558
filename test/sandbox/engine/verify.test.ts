import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoTime } from '../../../sandbox/engine/event-log.js';
import type { RunningEngine } from '../../../sandbox/engine/server.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { loadSodium } from '../../../sandbox/engine/sodium.js';
import { SodiumVerifier, ThreadPoolVerifier, VerifyPool } from '../../../sandbox/engine/verify-pool.js';
import { fundedClient, generateKeyPair } from './helpers.js';

function keyPair(): { hex: string; sig: (m: Buffer) => string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { hex: der.subarray(der.length - 32).toString('hex'), sig: (m) => sign(null, m, privateKey).toString('hex') };
}

// sodium-native ships prebuilt binaries for the platforms this project runs on; the engine falls
// back to node:crypto elsewhere, but here it must load so the libsodium paths are really tested.
const sodium = await loadSodium();
if (!sodium) throw new Error('sodium-native did not load');
const pool = new VerifyPool(1);
const sodiumPool = new VerifyPool(2, sodium.path);
afterAll(() => Promise.all([pool.close(), sodiumPool.close()]));

describe.each([
  ['libsodium on worker threads (default)', sodiumPool],
  ['libsodium inline', new SodiumVerifier(sodium.lib)],
  ['node:crypto on the libuv thread pool', new ThreadPoolVerifier()],
  ['node:crypto on worker threads', pool],
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
      v.verify(k.hex, msg, 'zz'.repeat(64)),
      v.verify(k.hex, msg, '0'.repeat(128)),
      v.verify('0'.repeat(64), msg, good),
    ]);
    expect(results).toEqual([false, false, false, false, false, false, false, false, false]);
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

describe.each([
  [{}, 'libsodium on 2 worker threads'],
  [{ verifier: 'main' }, 'libsodium inline on the main thread'],
  [{ verifyWorkers: 1 }, 'libsodium on 1 worker thread'],
  [{ verifier: 'uv' }, 'async node:crypto verify on the libuv thread pool'],
  // The fallback when sodium-native cannot load (same code path as verifyCrypto: 'node').
  [{ verifyCrypto: 'node' }, 'async node:crypto verify on the libuv thread pool'],
  [{ verifyCrypto: 'node', verifyWorkers: 2 }, 'node:crypto on 2 worker threads'],
  [{ verifyCrypto: 'node', verifyWorkers: 0 }, 'node:crypto inline on the main thread'],
] as const)('engine verifier %o', (options, described) => {
  let eng: RunningEngine;
  const file = fileScope();
  beforeAll(async () => {
    eng = await testEngine(file, { ...options });
  });

  it(`is "${described}" and accepts a valid order but not a forged one`, async () => {
    expect(eng.verifier).toBe(described);
    const alice = await fundedClient(eng.url, eng.adminToken, '1000', 'alice');
    const order = { market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.01', price: '1000' };
    expect((await alice.placeOrder(order)).body).toMatchObject({ ok: true, status: 'open' });
    const forged = await alice.signed('POST', '/v1/orders', order, { key: generateKeyPair().privateKey });
    expect(forged.status).toBe(401);
  });
});
