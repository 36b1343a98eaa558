// The live open interest (docs/stream.md "Open interest"): one `open_interest.update` per market
// whose open interest a batch of engine events changed, made from the fill legs
// (projections/open-interest.ts) and seeded at start from the mirror's open epochs, the same rows
// GET /v1/markets sums, so the frame and the REST field agree at the same seq.
//
// Without a seed (no database, or its read failed), when the events after the seed did not all
// arrive, or after the engine's history was replaced while the mirror still holds the old one, the
// figure is unknown: nothing is sent rather than a wrong number; the REST field is then the one to read.
import type { LiveFeature } from '../contracts/live-feature.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import { asFill } from '../projections/fill.js';
import { OpenInterestBook } from '../projections/open-interest.js';
import type { OpenInterestSeed } from '../db/queries/open-interest.js';
import { wantsKind, type Subscription } from './subscription.js';

export const OPEN_INTEREST_KIND = 'open_interest.update';

export interface OpenInterestFeedOptions {
  /** Reads the mirror's open long epochs in one snapshot; null when no database is configured. */
  readSeed: (() => Promise<OpenInterestSeed>) | null;
  publish(frame: Frame): number;
  head(): number | null;
  logger: { warn(obj: object, msg: string): void };
}

export class OpenInterestFeed implements LiveFeature<Subscription> {
  readonly name = 'open-interest';
  private readonly book = new OpenInterestBook();
  /** The seed's seq: events up to it are already in the book. null: not seeded (nothing is sent). */
  private seededAt: number | null = null;
  /** The seq of the last event in the book (the seed's, then each delivered one). */
  private last = 0;
  private known: ReadonlySet<string> = new Set();
  /** Markets changed in the current group of events, with the event that changed them last. */
  private readonly pending = new Map<string, { seq: number; ts: string }>();
  /** The seq and time of the last change per market (the snapshot frame's). */
  private readonly lastChange = new Map<string, { seq: number; ts: string }>();

  constructor(private readonly options: OpenInterestFeedOptions) {}

  /**
   * Seeds from the mirror whatever the stream's start: the events after the seed must then arrive
   * without a hole (checked in `event`), which also covers a stream started live from the engine's
   * head while the mirror is behind it, or an empty mirror beside an engine with history.
   */
  async start(): Promise<void> {
    if (!this.options.readSeed) return;
    const seed = await this.options.readSeed();
    this.book.seed(seed.longs);
    this.seededAt = this.last = seed.asOfSeq ?? 0;
  }

  event(e: EngineEvent): void {
    if (this.seededAt === null || e.seq <= this.last) return;
    if (e.seq > this.last + 1) {
      // Engine seqs have no holes: events between were never delivered (a stream started after a
      // mirror that is behind, or events skipped live). A fill among them would be missing for good.
      this.options.logger.warn({ after: this.last, next: e.seq }, 'stream: open interest unknown (events after the seed were not delivered); restart the gateway to seed it again');
      this.forget();
      return;
    }
    this.last = e.seq;
    if (e.market === undefined) return;
    const fill = asFill(e);
    if (!fill || !this.book.apply(e.market, fill)) return;
    const at = { seq: e.seq, ts: e.ts };
    this.lastChange.set(e.market, at);
    this.pending.set(e.market, at);
  }

  /** At most one frame per market per group of events (the runtime ends each one): its value after the group's last event. */
  endOfBatch(): void {
    const changed = [...this.pending];
    this.pending.clear();
    for (const [market, at] of changed) this.options.publish(this.frameOf(market, at));
  }

  snapshot(sub: Subscription): { frames: Frame[] } | null {
    if (this.seededAt === null || !wantsKind(sub, OPEN_INTEREST_KIND)) return null;
    const head = this.options.head() ?? this.seededAt;
    const markets = new Set([...this.known, ...this.book.markets()]);
    const frames: Frame[] = [];
    for (const market of [...markets].sort()) {
      if (sub.markets && !sub.markets.has(market)) continue;
      // The value is current as of the head; ts is the time of its last change (or now, for a seeded one).
      const ts = this.lastChange.get(market)?.ts ?? new Date().toISOString();
      frames.push(this.frameOf(market, { seq: head, ts }));
    }
    return { frames };
  }

  markets(known: ReadonlySet<string>): void {
    this.known = known;
  }

  replaced(): void {
    // The mirror still holds the old history: a reseed now would mix the two. Unknown until restart.
    if (this.seededAt !== null) this.options.logger.warn({}, 'stream: open interest unknown after the engine history was replaced; restart the gateway to seed it again');
    this.forget();
  }

  /** The figure is no longer known: nothing more is sent. */
  private forget(): void {
    this.book.reset();
    this.pending.clear();
    this.lastChange.clear();
    this.seededAt = null;
  }

  private frameOf(market: string, at: { seq: number; ts: string }): Frame {
    return { kind: OPEN_INTEREST_KIND, seq: at.seq, ts: at.ts, market, payload: { openInterest: this.book.value(market), asOfSeq: at.seq } };
  }
}
