// All projections composed: one engine event in, the frames it gives out, in a fixed order:
//   1. candle.close for every bucket this event's engine time ended (before anything newer),
//   2. the passthrough event itself,
//   3. per fill leg: position.update then balance.update,
//   4. the trade, 5. candle.update for each interval.
import { initialCandles, projectCandles, type CandlesState } from './candles.js';
import { projectBalances } from './balance.js';
import { projectPassthrough } from './passthrough.js';
import { initialPositions, positionFramesByLeg, type PositionsState } from './positions.js';
import { projectTrade } from './trades.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import { asFill } from './fill.js';
import type { Frame } from '../contracts/frame.js';

export interface ProjectionState {
  positions: PositionsState;
  candles: CandlesState;
}

export function initialProjectionState(candles: CandlesState = initialCandles()): ProjectionState {
  return { positions: initialPositions(), candles };
}

/** `fill`: the event's fill as read once by the caller (read here when not given). */
export function project(state: ProjectionState, event: EngineEvent, fill = asFill(event)): { state: ProjectionState; frames: Frame[] } {
  const candles = projectCandles(state.candles, event, fill);
  const frames: Frame[] = [];
  const updates: Frame[] = [];
  for (const f of candles.frames) (f.kind === 'candle.close' ? frames : updates).push(f);
  frames.push(...projectPassthrough(event));
  if (event.kind === 'engine.order_filled') {
    const positions = positionFramesByLeg(state.positions, event, fill);
    const balances = projectBalances(event, fill);
    // Both lists have one entry per leg (or are empty for a malformed fill): pair them by leg.
    for (let i = 0; i < balances.length; i++) {
      const p = positions[i];
      if (p) frames.push(p);
      frames.push(balances[i]!);
    }
    frames.push(...projectTrade(event, fill));
  }
  frames.push(...updates);
  return { state: { positions: state.positions, candles: candles.state }, frames };
}
