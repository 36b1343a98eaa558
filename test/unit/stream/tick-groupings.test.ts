// The bound on distinct `tick:` book groupings (src/stream/tick-groupings.ts): counted per
// connection through the hub's watch, refused past the bound unless already held.
import { describe, expect, it } from 'vitest';
import { TickGroupings } from '../../../src/stream/tick-groupings.js';
import { bookViewSpec } from '../../../src/stream/book-subscription.js';
import { InvalidSubscriptionError } from '../../../src/stream/errors.js';

const tick = (t: string) => ({ book: bookViewSpec('20', `tick:${t}`) });

describe('TickGroupings', () => {
  it('admits up to the bound, then only groupings already held; sig: and none always', () => {
    const g = new TickGroupings(2);
    g.admit(tick('1').book);
    g.changed(null, tick('1'));
    g.changed(null, tick('0.5'));
    expect(() => g.admit(tick('2').book)).toThrow(InvalidSubscriptionError);
    try {
      g.admit(tick('2').book);
    } catch (err) {
      expect((err as InvalidSubscriptionError).failure).toBe('too_many');
    }
    expect(() => g.admit(tick('1').book)).not.toThrow();
    expect(() => g.admit(tick('0.50').book)).not.toThrow(); // the same grouping, spelt otherwise
    expect(() => g.admit(bookViewSpec('20', 'sig:3'))).not.toThrow();
    expect(() => g.admit(null)).not.toThrow();
  });

  it('frees a grouping when its last connection closes or changes view', () => {
    const g = new TickGroupings(1);
    g.changed(null, tick('1'));
    g.changed(null, tick('1'));
    g.changed(tick('1'), null);
    expect(() => g.admit(tick('2').book)).toThrow(InvalidSubscriptionError);
    g.changed(tick('1'), { book: bookViewSpec('20', 'none') });
    expect(g.size).toBe(0);
    expect(() => g.admit(tick('2').book)).not.toThrow();
  });
});
