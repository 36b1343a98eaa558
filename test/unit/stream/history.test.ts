import { describe, expect, it } from 'vitest';
import { History } from '../../../src/stream/history.js';
import { framedText } from '../../../src/stream/framed-text.js';

const entry = (seq: number) => ({ frame: { kind: 'trade', seq, ts: '2026-11-21T10:00:00.000Z', payload: {} }, ...framedText(String(seq)) });

describe('replay history', () => {
  it('knows nothing until told where the stream starts or a frame arrives', () => {
    const h = new History(3);
    expect(h.coveredAfter).toBeNull();
    h.push(entry(10));
    expect(h.coveredAfter).toBe(9);
  });

  it('keeps the last N frames and moves coveredAfter past each evicted seq', () => {
    const h = new History(3);
    h.markCoveredAfter(4);
    for (const s of [5, 6, 7, 8, 9]) h.push(entry(s));
    expect(h.size).toBe(3);
    expect(h.coveredAfter).toBe(6);
    expect([...h.after(6)].map((e) => e.frame.seq)).toEqual([7, 8, 9]);
    expect([...h.after(8)].map((e) => e.frame.seq)).toEqual([9]);
    expect([...h.after(9)]).toEqual([]);
  });

  it('an unfilled gap moves coveredAfter forward, never back', () => {
    const h = new History(10);
    h.markCoveredAfter(100);
    h.markCoveredAfter(50);
    expect(h.coveredAfter).toBe(100);
  });

  it('with size 0 nothing is held and every frame is "evicted" at once', () => {
    const h = new History(0);
    h.push(entry(3));
    expect(h.size).toBe(0);
    expect(h.coveredAfter).toBe(3);
  });
});
