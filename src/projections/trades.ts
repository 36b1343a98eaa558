// trade: public, one per match. The engine sends one `engine.order_filled` event per match, so a
// flip's two taker legs (close + open) are already one event: the trade takes the match's own
// size, price and taker side rather than summing legs. Stateless.
import { normalizeDecimal } from '../decimal.js';
import { asFill } from './fill.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';

export function projectTrade(event: EngineEvent, fill = asFill(event)): Frame[] {
  if (!fill) return [];
  return [
    {
      kind: 'trade',
      seq: event.seq,
      ts: event.ts,
      market: event.market!,
      payload: {
        // The REST trade's id too: a trade has one shape live and in REST (the client's toTrade).
        matchId: fill.matchId,
        side: fill.takerSide,
        size: normalizeDecimal(fill.size),
        price: normalizeDecimal(fill.price),
        takerOrderId: fill.takerOrderId,
        makerOrderId: fill.makerOrderId,
      },
    },
  ];
}
