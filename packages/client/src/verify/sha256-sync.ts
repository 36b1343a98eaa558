// SHA-256 (FIPS 180-4) in plain JavaScript, synchronous: for the many small inputs of a history
// (a leaf per event, a node per pair), where WebCrypto's cost is its per-call hop to another thread
// and back through a promise, not the bytes (ADR 0300). Checked against node:crypto and WebCrypto
// on every length around the block boundaries (test/unit/client/sha256-sync.test.ts).

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** Message schedule, reused by every call (hashing is synchronous). */
const W = new Int32Array(64);
/** The last one or two blocks (the tail and the padding), reused. */
const TAIL = new Uint8Array(128);

/** Runs the compression function over the 64-byte blocks of `m` from `at` to `end` into `h`. */
function blocks(h: Int32Array, m: Uint8Array, at: number, end: number): void {
  let h0 = h[0]!, h1 = h[1]!, h2 = h[2]!, h3 = h[3]!, h4 = h[4]!, h5 = h[5]!, h6 = h[6]!, h7 = h[7]!;
  const w = W;
  for (; at < end; at += 64) {
    for (let i = 0; i < 16; i++) {
      const j = at + i * 4;
      w[i] = (m[j]! << 24) | (m[j + 1]! << 16) | (m[j + 2]! << 8) | m[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, k = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + k) | 0;
  }
  h[0] = h0; h[1] = h1; h[2] = h2; h[3] = h3; h[4] = h4; h[5] = h5; h[6] = h6; h[7] = h7;
}

const STATE = new Int32Array(8);
const IV = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/**
 * sha256 of `data[start, end)` written as 32 bytes into `out` at `outAt`. Nothing is allocated:
 * the full blocks are read in place, the tail and padding go through a scratch block.
 */
export function sha256Into(data: Uint8Array, start: number, end: number, out: Uint8Array, outAt: number): void {
  if (!(start >= 0 && start <= end && end <= data.length)) throw new RangeError(`bytes ${start}..${end} of ${data.length}`);
  const h = STATE;
  h.set(IV);
  const n = end - start;
  const full = start + (n - (n % 64));
  blocks(h, data, start, full);
  const rest = end - full;
  const tail = TAIL;
  tail.fill(0);
  for (let i = 0; i < rest; i++) tail[i] = data[full + i]!;
  tail[rest] = 0x80;
  const tailLength = rest < 56 ? 64 : 128;
  // The length in bits, big-endian, in the last 8 bytes (inputs here stay far below 2^53 bits).
  const bits = n * 8;
  const high = Math.floor(bits / 0x100000000);
  const low = bits >>> 0;
  tail[tailLength - 8] = high >>> 24;
  tail[tailLength - 7] = high >>> 16;
  tail[tailLength - 6] = high >>> 8;
  tail[tailLength - 5] = high;
  tail[tailLength - 4] = low >>> 24;
  tail[tailLength - 3] = low >>> 16;
  tail[tailLength - 2] = low >>> 8;
  tail[tailLength - 1] = low;
  blocks(h, tail, 0, tailLength);
  for (let i = 0; i < 8; i++) {
    const v = h[i]!;
    const o = outAt + i * 4;
    out[o] = v >>> 24;
    out[o + 1] = v >>> 16;
    out[o + 2] = v >>> 8;
    out[o + 3] = v;
  }
}

/** sha256(data), 32 new bytes. */
export function sha256Sync(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  sha256Into(data, 0, data.length, out, 0);
  return out;
}

const encoder = new TextEncoder();
/** Scratch input of a leaf (0x00 ‖ utf8(text)), grown as needed. */
let leafInput = new Uint8Array(4096);
/** Scratch input of a node (0x01 ‖ left ‖ right). */
const NODE = new Uint8Array(65);

/** The leaves sha256(0x00 ‖ utf8(text)) of `texts`, 32 bytes each, one after the other. */
export function leavesOf(texts: readonly string[]): Uint8Array {
  const out = new Uint8Array(texts.length * 32);
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i]!;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (leafInput.length < 1 + 3 * text.length) leafInput = new Uint8Array(2 * (1 + 3 * text.length));
    leafInput[0] = 0;
    const { written } = encoder.encodeInto(text, leafInput.subarray(1));
    sha256Into(leafInput, 0, 1 + written, out, i * 32);
  }
  return out;
}

/**
 * The root (32 bytes) of `count` leaves laid out in `level` (32 bytes each), which it overwrites:
 * neighbours pair level by level from the left, sha256(0x01 ‖ left ‖ right); an unpaired last node
 * moves up unchanged. Null for no leaves.
 */
export function treeRootOf(level: Uint8Array, count: number): Uint8Array | null {
  if (count === 0) return null;
  const node = NODE;
  node[0] = 1;
  while (count > 1) {
    const pairs = count >> 1;
    for (let j = 0; j < pairs; j++) {
      // Read pair j before writing node j: it goes to bytes no later pair reads.
      node.set(level.subarray(64 * j, 64 * j + 64), 1);
      sha256Into(node, 0, 65, level, 32 * j);
    }
    if (count & 1) level.copyWithin(32 * pairs, 32 * (count - 1), 32 * count);
    count = pairs + (count & 1);
  }
  return level.slice(0, 32);
}

/** sha256(0x00 ‖ 32 raw bytes): the leaf of a user root in its manifest. */
export function rootLeaf(root: Uint8Array): Uint8Array {
  const input = new Uint8Array(33);
  input.set(root, 1);
  return sha256Sync(input);
}

/** sha256(0x01 ‖ left ‖ right). */
export function nodeSync(left: Uint8Array, right: Uint8Array): Uint8Array {
  const input = new Uint8Array(65);
  input[0] = 1;
  input.set(left, 1);
  input.set(right, 33);
  return sha256Sync(input);
}
