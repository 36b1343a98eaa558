// The client's synchronous SHA-256, both implementations (hash-wasm's WebAssembly, ADR 0370, and
// @noble/hashes' plain JavaScript, ADR 0300), against node:crypto and WebCrypto: every length across
// the first block boundaries and a long input, the FIPS 180-4 examples, a leaf per text (ASCII and
// not), and trees of every small size in the scheme's shape (the unpaired last node moved up
// unchanged), compared with the scheme's own treeRoot over node:crypto hashes.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leavesOf, loadSha256, nodeSync, rootLeaf, sha256Engine, sha256Into, sha256Sync, treeRootOf, useSha256, type Sha256Engine } from '../../../packages/client/src/verify/sha256-sync.js';
import { treeRoot } from '../../../packages/client/src/verify/scheme.js';

const sha = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

it('loads the WebAssembly one, which then hashes by default; either can be chosen', async () => {
  await loadSha256();
  expect(sha256Engine()).toBe('wasm');
  expect(useSha256('js')).toBe('js');
  expect(useSha256('wasm')).toBe('wasm');
});

describe.each<Sha256Engine>(['wasm', 'js'])('SHA-256 in %s', (engine) => {
  beforeAll(async () => {
    await loadSha256();
    expect(useSha256(engine)).toBe(engine);
  });
  afterAll(() => void useSha256('wasm'));

  it('equals node:crypto at every length from 0 to 1 100 bytes and on 3 MB, and WebCrypto on a sample', async () => {
    for (let n = 0; n <= 1100; n++) {
      const data = randomBytes(n);
      expect([n, hex(sha256Sync(data))]).toEqual([n, sha(data).toString('hex')]);
    }
    const big = randomBytes(3_000_000);
    expect(hex(sha256Sync(big))).toBe(sha(big).toString('hex'));
    for (const n of [0, 55, 56, 63, 64, 65, 119, 120, 128, 1000]) {
      const data = randomBytes(n);
      expect(hex(sha256Sync(data))).toBe(Buffer.from(await crypto.subtle.digest('SHA-256', data)).toString('hex'));
    }
  });

  it('the FIPS 180-4 examples', () => {
    const text = (s: string) => hex(sha256Sync(new TextEncoder().encode(s)));
    expect(text('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(text('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(text('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(hex(sha256Sync(new Uint8Array(1_000_000).fill(0x61)))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('hashes a range of a buffer into another at an offset, leaving the rest alone', () => {
    const data = randomBytes(300);
    const out = new Uint8Array(80).fill(7);
    sha256Into(data, 10, 250, out, 40);
    expect(hex(out.subarray(40, 72))).toBe(sha(data.subarray(10, 250)).toString('hex'));
    expect([...out.subarray(0, 40), ...out.subarray(72)].every((b) => b === 7)).toBe(true);
    expect(() => sha256Into(data, 10, 301, out, 0)).toThrow(RangeError);
  });

  it('leaves of ASCII and of non-ASCII texts equal sha256(0x00 ‖ utf8(text)) each', () => {
    const texts = ['{"a":1}', '', '{"note":"café"}', '{"e":"😀"}', 'z'.repeat(5_000), '{"zero":"\\u0000"}', '€'.repeat(3000)];
    const leaves = leavesOf(texts);
    expect(leaves.length).toBe(32 * texts.length);
    texts.forEach((t, i) => expect(hex(leaves.subarray(32 * i, 32 * i + 32))).toBe(sha(Buffer.from([0]), Buffer.from(t, 'utf8')).toString('hex')));
  });

  it('trees of 0 to 40 leaves, and 1 000, in the scheme shape: the same root as treeRoot over node:crypto', () => {
    const node = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);
    for (const n of [...Array.from({ length: 41 }, (_, i) => i), 1000]) {
      const leaves = Array.from({ length: n }, (_, i) => sha(Buffer.from(String(i))));
      const want = n === 0 ? null : treeRoot(leaves, node, Buffer.alloc(32)).toString('hex');
      const got = treeRootOf(new Uint8Array(Buffer.concat(leaves)), n);
      expect([n, got && hex(got)]).toEqual([n, want]);
    }
  });

  it("a user root's leaf and a node", () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    expect(hex(rootLeaf(a))).toBe(sha(Buffer.from([0]), a).toString('hex'));
    expect(hex(nodeSync(a, b))).toBe(sha(Buffer.from([1]), a, b).toString('hex'));
  });
});
