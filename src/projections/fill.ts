// Narrowing of an `engine.order_filled` payload (docs/engine.md "Event stream"). Events come from another
// system: a malformed fill yields no domain frames (the raw event is still passed through).
import { isDecimal as isDec } from '../decimal.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { FillLeg, FillPayload } from './types.js';

const isStr = (v: unknown): v is string => typeof v === 'string';
const isSide = (v: unknown): v is 'buy' | 'sell' => v === 'buy' || v === 'sell';

function isLeg(v: unknown): v is FillLeg {
  if (typeof v !== 'object' || v === null) return false;
  const l = v as Record<string, unknown>;
  return (
    isStr(l.party) &&
    isStr(l.orderId) &&
    (l.role === 'taker' || l.role === 'maker') &&
    isSide(l.side) &&
    isDec(l.size) &&
    isDec(l.price) &&
    isStr(l.positionId) &&
    isDec(l.positionSize) &&
    isDec(l.entryPrice) &&
    isDec(l.realizedPnl) &&
    isDec(l.newBalance)
  );
}

/**
 * The fill of an `engine.order_filled` event with a market, or null when it is not one. The live
 * runtime reads it once per event and hands it to every feature (LiveFeature `event`); the
 * projections take it as an argument and read it themselves only when called alone.
 */
export function asFill(event: EngineEvent): FillPayload | null {
  return event.kind === 'engine.order_filled' ? check(event) : null;
}

function check(event: EngineEvent): FillPayload | null {
  if (!isStr(event.market)) return null;
  const p = event.payload as Record<string, unknown>;
  if (!isStr(p.matchId) || !isDec(p.price) || !isDec(p.size) || !isSide(p.takerSide) || !isStr(p.takerOrderId) || !isStr(p.makerOrderId)) return null;
  if (!Array.isArray(p.legs) || !p.legs.every(isLeg)) return null;
  return p as unknown as FillPayload;
}
