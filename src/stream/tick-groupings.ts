// The bound on distinct `tick:` book groupings (docs/stream.md "Order book deltas"). Every
// distinct (market, depth, grouping) is a view whose levels are regrouped and diffed on each book
// change; `sig:` has four values and depth a fixed range, but `tick:` takes any decimal, so one
// client could open views without end, each costing CPU on every event for every market it names.
//
// Guarantees:
// - `changed` keeps, per `tick:` grouping, the number of connections holding a view with it (the
//   hub's watch: `before` null when a connection opens, `after` null when it closes).
// - `admit(spec)` passes a view that is not `tick:`, or whose grouping a connection holds already,
//   or while fewer than `max` distinct `tick:` groupings are held; otherwise it throws
//   InvalidSubscriptionError 'too_many' (400 `too_many_subscriptions`, or its `stream.error`).
//   Admission and the connection's registration are not one step: concurrent openings with new
//   groupings may pass `max` by as many as are being opened at once.
import { groupingKey } from '../projections/book-view.js';
import type { BookViewSpec } from './book-views.js';
import { InvalidSubscriptionError } from './errors.js';

/** Distinct `tick:` groupings connections may hold at once, the whole process. */
export const MAX_TICK_GROUPINGS = 64;

interface HoldsBook {
  book: BookViewSpec | null;
}

export class TickGroupings {
  private readonly held = new Map<string, number>();

  constructor(readonly max = MAX_TICK_GROUPINGS) {}

  get size(): number {
    return this.held.size;
  }

  admit(spec: BookViewSpec | null): void {
    const key = tickKey(spec);
    if (key === null || this.held.has(key) || this.held.size < this.max) return;
    throw new InvalidSubscriptionError(
      `the gateway already serves ${this.max} distinct tick: groupings; use one of those, sig:<2..5> or none`,
      'too_many',
    );
  }

  changed(before: HoldsBook | null, after: HoldsBook | null): void {
    const was = tickKey(before?.book ?? null);
    const now = tickKey(after?.book ?? null);
    if (was === now) return;
    if (was !== null) {
      const n = (this.held.get(was) ?? 1) - 1;
      if (n <= 0) this.held.delete(was);
      else this.held.set(was, n);
    }
    if (now !== null) this.held.set(now, (this.held.get(now) ?? 0) + 1);
  }
}

function tickKey(spec: BookViewSpec | null): string | null {
  return spec && spec.grouping.kind === 'tick' ? groupingKey(spec.grouping) : null;
}
