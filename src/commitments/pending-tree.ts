// A user batch's tree while its events arrive: one leaf at a time, the root on demand, in O(log n)
// hashes and O(log n) memory. It keeps the root of each complete subtree on a stack (heights
// strictly decreasing from the bottom); a pushed leaf merges with equal-height subtrees as a binary
// counter carries. The root folds the stack from the top: the scheme's "an unpaired last node moves
// up unchanged" makes the level-by-level tree exactly that fold (a subtree left over on a level
// pairs, higher up, with the fold of everything to its right). test/unit/commitments proves it
// against the level-by-level tree.
import { nodeHash, ZERO_ROOT } from './hash.js';

export class PendingTree {
  private readonly hashes: Buffer[] = [];
  private readonly heights: number[] = [];
  private leaves = 0;

  get count(): number {
    return this.leaves;
  }

  push(leaf: Buffer): void {
    let node = leaf;
    let height = 0;
    while (this.heights.length > 0 && this.heights[this.heights.length - 1] === height) {
      this.heights.pop();
      node = nodeHash(this.hashes.pop()!, node);
      height++;
    }
    this.hashes.push(node);
    this.heights.push(height);
    this.leaves++;
  }

  /** The root (hex) of the leaves pushed so far; 64 zeros for none. */
  root(): string {
    if (this.hashes.length === 0) return ZERO_ROOT;
    let acc = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) acc = nodeHash(this.hashes[i]!, acc);
    return acc.toString('hex');
  }
}
