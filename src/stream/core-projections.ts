// The stream's own projections as the first live feature (src/live-features.ts): candles,
// passthrough, positions, balances and trades from each event (src/projections/), and the state a
// connection's snapshot is made of (LiveState). It also says where the stream starts: after the
// mirror's newest seq, with the candles rebuilt from the mirror's fills up to there, so the engine
// replays the rest and the bars continue exactly.
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.js';
import type { EngineEvent, FillPayload } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import type { FeatureSnapshot, LiveFeature } from '../contracts/live-feature.js';
import { loadCandleSeed } from '../db/queries/candles.js';
import { seedCandles } from '../projections/candles.js';
import { initialProjectionState, project, type ProjectionState } from '../projections/index.js';
import { bookViewOf } from './book-views.js';
import { LiveState, partyStore } from './snapshot.js';
import type { Subscription } from './subscription.js';

export class CoreProjections implements LiveFeature<Subscription> {
  readonly name = 'core';
  private state: ProjectionState = initialProjectionState();
  private readonly liveState: LiveState;

  constructor(private readonly o: { db: Database; logger: FastifyBaseLogger; head: () => number | null }) {
    this.liveState = new LiveState({ candles: () => this.state.candles, head: o.head, store: partyStore(o.db), logger: o.logger });
  }

  /**
   * Where the stream starts: after the newest seq of the database's `events` (up to `replayFrom`
   * when the source can replay from there) with the candles rebuilt up to it; else `replayFrom`;
   * else null, live from the engine's head with empty candle buckets.
   */
  async startPoint(replayFrom: number | null): Promise<number | null> {
    const { db, logger } = this.o;
    if (!db.configured) return replayFrom;
    try {
      const seed = await loadCandleSeed(db, undefined, replayFrom);
      if (seed.nowMs !== null) this.state = initialProjectionState(seedCandles(seed.trades, seed.nowMs));
      if (seed.truncated) logger.warn('candle rebuild read its row limit: older matches of the day are missing from 4h/1d bars');
      logger.info({ startAfter: seed.maxSeq, matches: seed.trades.length }, 'stream: candles rebuilt from the database');
      return seed.maxSeq ?? replayFrom;
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'stream: database unavailable at start; streaming live from the engine head');
      return replayFrom;
    }
  }

  start(startAfter: number | null): void {
    this.liveState.coveredAfter = startAfter;
  }

  event(event: EngineEvent, fill: FillPayload | null): readonly Frame[] {
    if (this.liveState.coveredAfter === null) this.liveState.coveredAfter = event.seq - 1;
    const { state, frames } = project(this.state, event, fill);
    this.state = state;
    for (const f of frames) if (f.kind === 'position.update' || f.kind === 'balance.update') this.liveState.observe(f);
    return frames;
  }

  /** The order book poller's snapshots (the book views' own snapshots are theirs). */
  frame(frame: Frame): void {
    if (frame.kind === 'orderbook.snapshot' && bookViewOf(frame) === undefined) this.liveState.observe(frame);
  }

  snapshot(sub: Subscription): FeatureSnapshot {
    return this.liveState.build(sub);
  }

  replaced(head: number): void {
    this.state = initialProjectionState();
    this.liveState.reset(head);
  }
}
