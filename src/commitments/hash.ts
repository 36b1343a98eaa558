// The commitment scheme's hashes with node:crypto (docs/verification.md): leaves of events and of
// user roots, inner nodes, and the tree over them. The shape itself (pairing, the unpaired last
// node moving up) is the client package's pure module, shared with every browser verifier.
import { hash } from 'node:crypto';
import { leafText, siblingPath, treeRoot, ZERO_ROOT, type CommittedEvent, type PathStep } from '../../packages/client/src/verify/scheme.js';

export { ZERO_ROOT };

/** Scratch input of nodeHash (0x01 ‖ left ‖ right); hashing reads it synchronously. */
const NODE_INPUT = Buffer.alloc(65);
const ZERO = Buffer.alloc(32);

/** sha256(0x00 ‖ utf8(canonical JSON of the envelope)). */
export function eventLeaf(event: CommittedEvent): Buffer {
  return hash('sha256', `\u0000${leafText(event)}`, 'buffer');
}

/** sha256 of a leaf's whole input, 0x00 ‖ utf8(canonical JSON) already laid out (canonical-event.ts). */
export function leafOfInput(input: Buffer): Buffer {
  return hash('sha256', input, 'buffer');
}

/** sha256(0x00 ‖ the 32 raw bytes of a user root): a manifest's leaf. */
export function userRootLeaf(rootHex: string): Buffer {
  const input = Buffer.alloc(33);
  input.write(rootHex, 1, 'hex');
  return hash('sha256', input, 'buffer');
}

/** sha256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Buffer, right: Buffer): Buffer {
  NODE_INPUT[0] = 1;
  left.copy(NODE_INPUT, 1);
  right.copy(NODE_INPUT, 33);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** The root (hex) of already hashed leaves, level by level. */
export function rootOf(leaves: readonly Buffer[]): string {
  return leaves.length === 0 ? ZERO_ROOT : treeRoot(leaves, nodeHash, ZERO).toString('hex');
}

/** A user batch's root: its events' leaves in seq order. */
export function userBatchRoot(events: readonly CommittedEvent[]): string {
  return rootOf(events.map(eventLeaf));
}

/** A manifest's root over its user roots, given in manifest order (by party). */
export function manifestRoot(userRoots: readonly string[]): string {
  return rootOf(userRoots.map(userRootLeaf));
}

/** The path from user root `index` of a manifest up to the manifest root, as hex. */
export function manifestPath(userRoots: readonly string[], index: number): PathStep[] {
  return siblingPath(userRoots.map(userRootLeaf), index, nodeHash).map((s) => ({ side: s.side, hash: s.hash.toString('hex') }));
}
