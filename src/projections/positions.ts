// position.update: one frame per fill leg, keyed by the epoch (`positionId`), scoped to the leg's
// party. The engine lists a flip's closing leg (old epoch, size 0) before its opening leg (fresh
// epoch, realized PnL 0), so emitting legs in order gives the spec's "close first, then open".
import { normalizeDecimal } from '../decimal.js';
import { asFill } from './fill.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';

export interface PositionsState {
  /** Last asOfSeq sent per open epoch; closed epochs are forgotten (ids are never reused). */
  asOf: Map<string, number>;
}

export function initialPositions(): PositionsState {
  return { asOf: new Map() };
}

export function projectPositions(state: PositionsState, event: EngineEvent): { state: PositionsState; frames: Frame[] } {
  return { state, frames: positionFramesByLeg(state, event).filter((f): f is Frame => f !== null) };
}

/** One entry per fill leg (null where the leg says nothing new), so callers can pair legs. */
export function positionFramesByLeg(state: PositionsState, event: EngineEvent, fill = asFill(event)): Array<Frame | null> {
  if (!fill) return [];
  const frames: Array<Frame | null> = [];
  for (const leg of fill.legs) {
    const last = state.asOf.get(leg.positionId);
    // asOfSeq never goes back for one positionId (a stale or replayed event says nothing new).
    if (last !== undefined && event.seq < last) {
      frames.push(null);
      continue;
    }
    const size = normalizeDecimal(leg.positionSize);
    if (/^-?0\.0+$/.test(size)) state.asOf.delete(leg.positionId);
    else state.asOf.set(leg.positionId, event.seq);
    frames.push({
      kind: 'position.update',
      seq: event.seq,
      ts: event.ts,
      market: event.market!,
      userParty: leg.party,
      payload: {
        positionId: leg.positionId,
        size: size === '-0.0000000000' ? '0.0000000000' : size,
        entryPrice: normalizeDecimal(leg.entryPrice),
        realizedPnl: normalizeDecimal(leg.realizedPnl),
        asOfSeq: event.seq,
      },
    });
  }
  return frames;
}
