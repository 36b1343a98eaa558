// The two unsorted reads of a page of proofs' events put in seq order (src/db/queries/commitments.ts):
// whatever order each read came in (ascending, descending, neither), the rows of both by seq.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bySeq } from '../../../src/db/queries/commitments.js';
import { EVENT_TEXT_COLUMNS } from '../../../src/db/json/canonical-event.js';
import type { RawRow } from '../../../src/db/json/row-shape.js';

const SEQ = EVENT_TEXT_COLUMNS.indexOf('seq');
const row = (seq: number, tag: string): RawRow => EVENT_TEXT_COLUMNS.map((c, i) => (i === SEQ ? Buffer.from(String(seq)) : c === 'payload' ? Buffer.from(JSON.stringify({ tag })) : Buffer.from(c)));
const seqsOf = (rows: readonly RawRow[]): number[] => rows.map((r) => Number(r[SEQ]!.toString()));

describe('bySeq', () => {
  it('merges two reads in any order into one in seq order, every row once (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 2 ** 40 }), { maxLength: 60 }),
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        fc.constantFrom('up', 'down', 'shuffled'),
        fc.constantFrom('up', 'down', 'shuffled'),
        (seqs, side, orderA, orderB) => {
          const a = seqs.filter((_, i) => side[i]).map((s) => row(s, 'a'));
          const b = seqs.filter((_, i) => !side[i]).map((s) => row(s, 'b'));
          const arrange = (rows: RawRow[], order: string): RawRow[] => {
            const sorted = [...rows].sort((x, y) => seqsOf([x])[0]! - seqsOf([y])[0]!);
            if (order === 'up') return sorted;
            if (order === 'down') return sorted.reverse();
            return sorted.map((r, i) => [r, (i * 7919) % 13] as const).sort((x, y) => x[1] - y[1]).map(([r]) => r);
          };
          const out = bySeq(arrange(a, orderA), arrange(b, orderB));
          expect(seqsOf(out)).toEqual([...seqs].sort((x, y) => x - y));
          // The rows themselves, not copies: each from the read it came in.
          expect(new Set(out)).toEqual(new Set([...a, ...b]));
        },
      ),
      { numRuns: 300, seed: 377 },
    );
  });
});
