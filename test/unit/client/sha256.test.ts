// The client's batched WebCrypto hashing (ADR 0064) against node:crypto: leaves of many texts
// through views of one encoded buffer (and the per-text path for non-ASCII text), and a tree level
// through one buffer of pairs, the unpaired last node moved up unchanged.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { leavesOfTexts, levelUp } from '../../../packages/client/src/verify/sha256.js';

const sha = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const hex = (b: ArrayBuffer) => Buffer.from(b).toString('hex');

describe('batched WebCrypto hashing', () => {
  it('leaves of ASCII and of non-ASCII texts equal sha256(0x00 ‖ utf8(text)) each', async () => {
    for (const texts of [
      ['{"a":1}', '', '{"kind":"x","seq":2}', 'z'.repeat(5_000)],
      ['{"note":"café"}', '{"a":1}', '{"e":"😀"}', '{"zero":"\\u0000"}'],
      [],
    ]) {
      const got = (await leavesOfTexts(texts)).map(hex);
      expect(got).toEqual(texts.map((t) => sha(Buffer.from([0]), Buffer.from(t, 'utf8')).toString('hex')));
    }
  });

  it('a level pairs neighbours with sha256(0x01 ‖ left ‖ right) and moves an unpaired last node up', async () => {
    for (const n of [1, 2, 3, 8, 9]) {
      const level = Array.from({ length: n }, (_, i) => {
        const h = sha(Buffer.from([i]));
        return h.buffer.slice(h.byteOffset, h.byteOffset + 32) as ArrayBuffer;
      });
      const want: string[] = [];
      for (let i = 0; i + 1 < n; i += 2) want.push(sha(Buffer.from([1]), new Uint8Array(level[i]!), new Uint8Array(level[i + 1]!)).toString('hex'));
      if (n % 2 === 1) want.push(hex(level[n - 1]!));
      expect((await levelUp(level)).map(hex)).toEqual(want);
    }
  });
});
