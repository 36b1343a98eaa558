// SHA-256, synchronous: for the many small inputs of a history (a leaf per event, a node per pair),
// where WebCrypto's cost is its per-call hop to another thread and back through a promise, not the
// bytes (ADR 0300). hash-wasm's WebAssembly SHA-256 once loaded (`loadSha256`): in Chromium about
// 4× faster than plain JavaScript on a history's leaves (ADR 0370); @noble/hashes' JavaScript until
// then, or for good where the page may not compile WebAssembly (a Content-Security-Policy without
// 'wasm-unsafe-eval'). Both are well-kept libraries with no dependency; both are checked against
// node:crypto and WebCrypto (test/unit/client/sha256-sync.test.ts). The leaves and tree levels
// below are laid out in place in one buffer.
import { sha256 as sha256Js } from '@noble/hashes/sha2.js';
import type { IHasher } from 'hash-wasm';

export type Sha256Engine = 'wasm' | 'js';

let loaded: IHasher | null = null;
let loading: Promise<void> | undefined;
let preferred: Sha256Engine = 'wasm';

/**
 * Loads the WebAssembly hasher once; resolves either way (where WebAssembly is refused, the
 * JavaScript one goes on hashing: same results, slower). `verifyUserBatch` awaits it. Imported
 * when first needed, so that a bundler splits it (about 8 KB gzip) from a page that never verifies;
 * never while `useSha256('js')` is in force (a page that wants no WebAssembly compiled).
 */
export function loadSha256(): Promise<void> {
  if (preferred === 'js' && loading === undefined) return Promise.resolve();
  loading ??= import('./wasm-sha256.js').then((m) => m.createSHA256()).then(
    (h) => {
      loaded = h;
    },
    () => {},
  );
  return loading;
}

/**
 * Which SHA-256 verification hashes with from now on: 'wasm' (the default: hash-wasm's WebAssembly,
 * loaded on the first verification) or 'js' (@noble/hashes' plain JavaScript; nothing is compiled).
 * Returns the one hashing now ('js' until the WebAssembly one is loaded). Both give the same results.
 */
export function useSha256(engine: Sha256Engine): Sha256Engine {
  preferred = engine;
  return sha256Engine();
}

/** The implementation hashing now. */
export function sha256Engine(): Sha256Engine {
  return preferred === 'wasm' && loaded !== null ? 'wasm' : 'js';
}

/** sha256 of `data[start, end)` written as 32 bytes into `out` at `outAt`. */
export function sha256Into(data: Uint8Array, start: number, end: number, out: Uint8Array, outAt: number): void {
  if (!(start >= 0 && start <= end && end <= data.length)) throw new RangeError(`bytes ${start}..${end} of ${data.length}`);
  out.set(sha256Sync(data.subarray(start, end)), outAt);
}

/** sha256(data), 32 new bytes. */
export function sha256Sync(data: Uint8Array): Uint8Array {
  if (preferred === 'wasm' && loaded !== null) return loaded.init().update(data).digest('binary');
  return sha256Js(data);
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
