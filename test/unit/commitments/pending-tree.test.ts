// The pending tree (a stack of subtree roots) gives, after every push, the root of the scheme's
// level-by-level tree, whose unpaired last node moves up unchanged (not RFC 6962's split, not
// Bitcoin's duplication). Property test over random leaf counts and contents, plus the shape facts
// that tell the rules apart.
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingTree } from '../../../src/commitments/pending-tree.js';
import { manifestPath, nodeHash, rootOf } from '../../../src/commitments/hash.js';

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const node = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);

/** The naive tree, written out here: pair neighbours from the left, carry an odd last node up. */
function naiveRoot(leaves: Buffer[]): string {
  if (leaves.length === 0) return '0'.repeat(64);
  let level = leaves;
  while (level.length > 1) {
    const up: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) up.push(i + 1 < level.length ? node(level[i]!, level[i + 1]!) : level[i]!);
    level = up;
  }
  return level[0]!.toString('hex');
}

describe('PendingTree', () => {
  it('equals the naive level-by-level tree after every push (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer(), (n, salt) => {
        const leaves = Array.from({ length: n }, (_, i) => sha(Buffer.from(`${salt}:${i}`)));
        const tree = new PendingTree();
        expect(tree.root()).toBe(naiveRoot([]));
        for (let i = 0; i < n; i++) {
          tree.push(leaves[i]!);
          expect(tree.count).toBe(i + 1);
          expect(tree.root()).toBe(naiveRoot(leaves.slice(0, i + 1)));
        }
        expect(rootOf(leaves)).toBe(naiveRoot(leaves));
      }),
      { numRuns: 25 },
    );
  });

  it('moves an unpaired last node up unchanged: 3 leaves give H(H(a,b), c), not H(H(a,b), H(c,c))', () => {
    const [a, b, c] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    const tree = new PendingTree();
    for (const x of [a, b, c]) tree.push(x);
    expect(tree.root()).toBe(node(node(a, b), c).toString('hex'));
    expect(tree.root()).not.toBe(node(node(a, b), node(c, c)).toString('hex'));
    // 5 leaves: the level-by-level rule promotes e twice; RFC 6962 would give the same here, but 6 differ:
    const six = Array.from({ length: 6 }, () => randomBytes(32));
    const t6 = new PendingTree();
    for (const x of six) t6.push(x);
    const [p, q, r, s, u, v] = six as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
    expect(t6.root()).toBe(node(node(node(p, q), node(r, s)), node(u, v)).toString('hex'));
    expect(nodeHash(p, q)).toEqual(node(p, q));
  });

  it('hashes O(log n) nodes per push and per root', () => {
    // 2^16 - 1 leaves: the stack holds 16 subtrees, so a root folds 15 nodes.
    const tree = new PendingTree();
    const leaf = randomBytes(32);
    for (let i = 0; i < 65_535; i++) tree.push(leaf);
    expect((tree as unknown as { hashes: Buffer[] }).hashes).toHaveLength(16);
  });
});

describe('manifest paths', () => {
  it('fold back to the manifest root from every user root (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 1, maxLength: 70 }), (raw) => {
        const roots = raw.map((r) => Buffer.from(r).toString('hex'));
        const leaves = roots.map((r) => sha(Buffer.from([0]), Buffer.from(r, 'hex')));
        const root = naiveRoot(leaves);
        roots.forEach((r, i) => {
          let acc = sha(Buffer.from([0]), Buffer.from(r, 'hex'));
          for (const step of manifestPath(roots, i)) {
            const sib = Buffer.from(step.hash, 'hex');
            acc = step.side === 'left' ? node(sib, acc) : node(acc, sib);
          }
          expect(acc.toString('hex')).toBe(root);
        });
      }),
      { numRuns: 100 },
    );
  });
});
