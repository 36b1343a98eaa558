// SHA-256, synchronous, from @noble/hashes (audited, no dependencies, browser and Node alike): for
// the many small inputs of a history (a leaf per event, a node per pair), where WebCrypto's cost is
// its per-call hop to another thread and back through a promise, not the bytes (ADR 0300). The
// leaves and tree levels below are laid out in place in one buffer. Checked against node:crypto and
// WebCrypto on every length around the block boundaries (test/unit/client/sha256-sync.test.ts).
import { sha256 } from '@noble/hashes/sha2.js';

/** sha256 of `data[start, end)` written as 32 bytes into `out` at `outAt`. */
export function sha256Into(data: Uint8Array, start: number, end: number, out: Uint8Array, outAt: number): void {
  if (!(start >= 0 && start <= end && end <= data.length)) throw new RangeError(`bytes ${start}..${end} of ${data.length}`);
  out.set(sha256(data.subarray(start, end)), outAt);
}

/** sha256(data), 32 new bytes. */
export function sha256Sync(data: Uint8Array): Uint8Array {
  return sha256(data);
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
