// The live open interest (docs/stream.md "Open interest"): one `open_interest.update` per market
// whose open interest a batch of engine events changed, made from the fill legs
// (projections/open-interest.ts) and seeded at start from the mirror's open epochs, the same rows
// GET /v1/markets sums, so the frame and the REST field agree at the same seq.
//
// Without a seed (no database, or its read failed) the figure is unknown: nothing is sent rather
// than a wrong number; the REST field is then the one to read. When the seed read at start failed,
// the events after it did not all arrive (a hole), or the engine's history was replaced, it is
// unknown only until it can be known again (ADR 0181): a history replaced from its start (head 0) is followed from its first
// event, from nothing; otherwise the mirror is read again every `reseedMs` until it holds this
// history up to an event this feed delivered itself (open-interest-catch-up.ts), and the fills
// delivered since are applied on top. Either way every market's figure is then sent once.
import type { LiveFeature } from '../contracts/live-feature.js';
import type { EngineEvent, FillPayload } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import { asFill } from '../projections/fill.js';
import { OpenInterestBook } from '../projections/open-interest.js';
import type { OpenInterestSeed } from '../db/queries/open-interest.js';
import { OpenInterestCatchUp } from './open-interest-catch-up.js';
import { wantsKind, type Subscription } from './subscription.js';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';

export const OPEN_INTEREST_KIND = 'open_interest.update';

export interface OpenInterestFeedOptions {
  /** Reads the mirror's open long epochs in one snapshot; null when no database is configured. */
  readSeed: (() => Promise<OpenInterestSeed>) | null;
  publish(frame: Frame): number;
  head(): number | null;
  logger: { warn(obj: object, msg: string): void };
  /** While the figure is unknown after a hole or a replaced history: how often the mirror is read again (ms). */
  reseedMs?: number;
  /** Times the reads again (default systemClock). */
  clock?: Clock;
}

/** The default of `reseedMs`: the indexer writes within a second or so of the engine. */
const RESEED_MS = 1_000;

type At = { seq: number; ts: string };

export class OpenInterestFeed implements LiveFeature<Subscription> {
  readonly name = 'open-interest';
  private readonly book = new OpenInterestBook();
  /** The seed's seq: events up to it are already in the book. null: not known (nothing is sent). */
  private seededAt: number | null = null;
  /** The seq of the last event delivered (the seed's, then each delivered one; the new head after a replacement). */
  private last = 0;
  /** The seq and time of the last event delivered (the frames sent when the figure is known again). */
  private lastAt: At | null = null;
  private known: ReadonlySet<string> = new Set();
  /** Markets changed in the current group of events, with the event that changed them last. */
  private readonly pending = new Map<string, At>();
  /** The seq and time of the last change per market (the snapshot frame's). */
  private readonly lastChange = new Map<string, At>();
  /** Every market's figure is sent at the end of the current group (it is known again). */
  private announce = false;
  /** While unknown after a hole or a replacement, with a database: what a later seed is checked and brought forward with. */
  private catchUp: OpenInterestCatchUp | null = null;
  /** A seed of this history read ahead of the events delivered: used when its newest event arrives and matches. */
  private ahead: OpenInterestSeed | null = null;
  private reseedTimer: ClockTimer | null = null;
  private reading = false;
  /** The seed read at start failed: the catch-up starts after the event before the first one delivered. */
  private catchUpAtFirstEvent = false;

  private readonly clock: Clock;

  constructor(private readonly options: OpenInterestFeedOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Seeds from the mirror whatever the stream's start: the events after the seed must then arrive
   * without a hole (checked in `event`), which also covers a stream started live from the engine's
   * head while the mirror is behind it, or an empty mirror beside an engine with history.
   */
  async start(): Promise<void> {
    if (!this.options.readSeed) return;
    let seed: OpenInterestSeed;
    try {
      seed = await this.options.readSeed();
    } catch (err) {
      // The database is away at start: unknown until the mirror holds an event this feed delivers
      // (the catch-up begins with the first event, whose seq is not known yet), not until a restart.
      this.options.logger.warn({ err: (err as Error).message }, 'stream: open interest unknown (the mirror could not be read at start); sent once the mirror holds the events streamed');
      this.catchUpAtFirstEvent = true;
      return;
    }
    this.book.seed(seed.longs);
    this.seededAt = this.last = seed.asOfSeq ?? 0;
  }

  event(e: EngineEvent, filled?: FillPayload | null): void {
    if (this.catchUpAtFirstEvent) {
      this.catchUpAtFirstEvent = false;
      this.last = e.seq - 1;
      this.catchUpAfter(this.last);
    }
    if ((this.seededAt === null && !this.catchUp) || e.seq <= this.last) return;
    if (e.seq > this.last + 1) {
      // Engine seqs have no holes: events between were never delivered (a stream started after a
      // mirror that is behind, or events skipped live). A fill among them would be missing: unknown
      // until the mirror holds this history past the hole.
      this.options.logger.warn({ after: this.last, next: e.seq }, 'stream: open interest unknown (events were not delivered); sent again once the mirror holds them');
      this.forget();
      this.catchUpAfter(e.seq - 1);
    }
    this.last = e.seq;
    this.lastAt = { seq: e.seq, ts: e.ts };
    if (this.catchUp) {
      this.catchUp.keep(e);
      if (this.ahead && e.seq >= this.ahead.asOfSeq!) this.useSeed(this.ahead, true);
      return;
    }
    if (e.market === undefined) return;
    const fill = filled === undefined ? asFill(e) : filled;
    if (!fill || !this.book.apply(e.market, fill)) return;
    const at = { seq: e.seq, ts: e.ts };
    this.lastChange.set(e.market, at);
    this.pending.set(e.market, at);
  }

  /** At most one frame per market per group of events (the runtime ends each one): its value after the group's last event. */
  endOfBatch(): void {
    if (this.announce) {
      this.announce = false;
      this.pending.clear();
      this.announceAll();
      return;
    }
    const changed = [...this.pending];
    this.pending.clear();
    for (const [market, at] of changed) this.options.publish(this.frameOf(market, at));
  }

  snapshot(sub: Subscription): { frames: Frame[] } | null {
    if (this.seededAt === null || !wantsKind(sub, OPEN_INTEREST_KIND)) return null;
    const head = this.options.head() ?? this.seededAt;
    const frames: Frame[] = [];
    for (const market of this.allMarkets()) {
      if (sub.markets && !sub.markets.has(market)) continue;
      // The value is current as of the head; ts is the time of its last change (or now, for a seeded one).
      const ts = this.lastChange.get(market)?.ts ?? new Date(this.clock.now()).toISOString();
      frames.push(this.frameOf(market, { seq: head, ts }));
    }
    return { frames };
  }

  markets(known: ReadonlySet<string>): void {
    this.known = known;
  }

  /**
   * Nothing of the old history survives. A new history from its start (head 0) is followed from
   * nothing: every event of it will be delivered. Otherwise its events up to `head` never will be,
   * and the mirror must first hold this history (the feed catches up from it).
   */
  replaced(head: number): void {
    // A failed start read counts as known-to-be-followed: it was waiting for its first event.
    const wasKnown = this.seededAt !== null || this.catchUp !== null || this.catchUpAtFirstEvent;
    this.forget();
    this.last = head;
    this.lastAt = null;
    if (!wasKnown) return;
    if (head === 0) {
      this.seededAt = 0;
      this.announce = true;
      return;
    }
    this.options.logger.warn({ head }, 'stream: open interest unknown after the engine history was replaced; sent again once the mirror holds the new history');
    this.catchUpAfter(head);
  }

  stop(): void {
    this.stopReseeding();
  }

  /** The figure is no longer known: nothing more is sent until it is. */
  private forget(): void {
    this.catchUpAtFirstEvent = false;
    this.book.reset();
    this.pending.clear();
    this.lastChange.clear();
    this.seededAt = null;
    this.announce = false;
    this.catchUp = null;
    this.ahead = null;
    this.stopReseeding();
  }

  /** Keeps the events after `seq` and reads the mirror every `reseedMs` until a seed of this history can be used. */
  private catchUpAfter(seq: number): void {
    if (!this.options.readSeed) return;
    this.catchUp = new OpenInterestCatchUp(seq);
    const everyMs = this.options.reseedMs ?? RESEED_MS;
    const tick = (): void => {
      this.reseedTimer = this.clock.setTimeout(tick, everyMs).unref();
      void this.readAgain();
    };
    this.reseedTimer = this.clock.setTimeout(tick, everyMs).unref();
    void this.readAgain();
  }

  private stopReseeding(): void {
    if (this.reseedTimer) this.clock.clearTimeout(this.reseedTimer);
    this.reseedTimer = null;
  }

  private async readAgain(): Promise<void> {
    const catchUp = this.catchUp;
    if (!catchUp || this.reading || !this.options.readSeed) return;
    this.reading = true;
    let seed: OpenInterestSeed;
    try {
      seed = await this.options.readSeed();
    } catch {
      return; // the database is away: the next tick reads again
    } finally {
      this.reading = false;
    }
    if (this.catchUp !== catchUp || seed.asOfSeq === null || seed.asOfSeq <= catchUp.after) return;
    if (seed.asOfSeq > this.last) this.ahead = seed; // the mirror is ahead: judged when its newest event is delivered
    else this.useSeed(seed, false);
  }

  /**
   * Installs a seed when its newest event is one this feed delivered; the fills after it go on top.
   * `inGroup`: called while an event is delivered, so the figures go at the group's end; else now.
   */
  private useSeed(seed: OpenInterestSeed, inGroup: boolean): void {
    this.ahead = null;
    const fills = this.catchUp?.fillsAfter(seed.asOf ?? null);
    if (!fills) return; // not this history (yet): the next read may be
    this.book.seed(seed.longs);
    for (const f of fills) if (this.book.apply(f.market, f.fill)) this.lastChange.set(f.market, { seq: f.seq, ts: f.ts });
    this.catchUp = null;
    this.stopReseeding();
    this.seededAt = seed.asOfSeq!;
    this.options.logger.warn({ asOfSeq: seed.asOfSeq, head: this.last }, 'stream: open interest known again (seeded from the mirror)');
    if (inGroup) this.announce = true;
    else this.announceAll();
  }

  /** Every market's figure as of the last event delivered (the figure is known again: what clients hold is stale). */
  private announceAll(): void {
    const at = this.lastAt ?? { seq: this.last, ts: new Date(this.clock.now()).toISOString() };
    for (const market of this.allMarkets()) this.options.publish(this.frameOf(market, at));
  }

  /** The engine's markets and any market with open interest, sorted. */
  private allMarkets(): string[] {
    return [...new Set([...this.known, ...this.book.markets()])].sort();
  }

  private frameOf(market: string, at: At): Frame {
    return { kind: OPEN_INTEREST_KIND, seq: at.seq, ts: at.ts, market, payload: { openInterest: this.book.value(market), asOfSeq: at.seq } };
  }
}
