// What the live open interest (open-interest-feed.ts) keeps while its figure is unknown after a hole
// or a replaced engine history: the events delivered since, so that a seed read from the mirror
// later can be checked and brought forward.
//
// A seed is used only when its newest event is one this feed delivered itself (the same fingerprint
// at the same seq): the mirror then holds this history up to there, not the old one (after a
// replacement the indexer may still hold, or be rebuilding, the old history) and not a copy that
// stops before the hole. The fills delivered after that event are applied on top; a leg sets its
// epoch's size, so a fill the seed already holds changes nothing.
import type { EngineEvent } from '../contracts/engine-event.js';
import type { FillPayload } from '../projections/types.js';
import { asFill } from '../projections/fill.js';
import { eventFingerprint } from '../engine/fingerprint.js';

/** A fill kept to be applied after a seed. */
export interface KeptFill {
  readonly seq: number;
  readonly ts: string;
  readonly market: string;
  readonly fill: FillPayload;
}

/** At most this many delivered events are kept; a seed older than the oldest kept cannot be used (a later one can). */
const MAX_KEPT = 50_000;

export class OpenInterestCatchUp {
  /** seq → the event's fingerprint and, for a fill, its legs; in seq order (insertion order). */
  private readonly kept = new Map<number, { print: string; fill: KeptFill | null }>();

  /** `after`: the last seq before the events this catch-up keeps (the hole's end, or the new history's head). */
  constructor(
    readonly after: number,
    private readonly max = MAX_KEPT,
  ) {}

  /** The next delivered event (strictly increasing seq, contiguous after `after`). */
  keep(e: EngineEvent): void {
    const fill = e.market !== undefined ? asFill(e) : null;
    this.kept.set(e.seq, { print: eventFingerprint(e), fill: fill && e.market !== undefined ? { seq: e.seq, ts: e.ts, market: e.market, fill } : null });
    if (this.kept.size > this.max) this.kept.delete(this.kept.keys().next().value!);
  }

  /**
   * The fills delivered after the seed's newest event, when that event is one this feed delivered
   * (so the seed is of this history, up to there); null when the seed cannot be used (yet).
   */
  fillsAfter(asOf: EngineEvent | null): KeptFill[] | null {
    if (!asOf) return null;
    const mine = this.kept.get(asOf.seq);
    if (!mine || mine.print !== eventFingerprint(asOf)) return null;
    const fills: KeptFill[] = [];
    for (const [seq, k] of this.kept) if (seq > asOf.seq && k.fill) fills.push(k.fill);
    return fills;
  }
}
