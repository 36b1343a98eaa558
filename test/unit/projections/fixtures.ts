// Recorded engine events (docs/engine.md "Event stream" shapes) for the projection tests.
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import type { FillLeg } from '../../../src/projections/types.js';

export const A = `alice::${'a'.repeat(64)}`;
export const B = `bob::${'b'.repeat(64)}`;

export function leg(l: Partial<FillLeg> & Pick<FillLeg, 'party' | 'role' | 'side' | 'size' | 'positionId' | 'positionSize'>): FillLeg {
  return {
    orderId: `${l.party.slice(0, 1)}-order`,
    price: '100.0000000000',
    fee: '0.0000000000',
    entryPrice: '100.0000000000',
    realizedPnl: '0.0000000000',
    newBalance: '1000.0000000000',
    ...l,
  };
}

export function fill(
  seq: number,
  ts: string,
  f: { price: string; size: string; takerSide: 'buy' | 'sell'; legs: FillLeg[]; market?: string },
): EngineEvent {
  return {
    seq,
    kind: 'engine.order_filled',
    ts,
    market: f.market ?? 'BTC-PERP',
    payload: {
      matchId: `m${seq}`,
      price: f.price,
      size: f.size,
      takerSide: f.takerSide,
      takerOrderId: 'taker-order',
      makerOrderId: 'maker-order',
      legs: f.legs,
    },
  };
}

export function tick(seq: number, ts: string): EngineEvent {
  return { seq, kind: 'engine.tick_start', ts, payload: { tick: seq } };
}

/** A buys `size` from B at `price`: A taker, B maker, no flips. */
export function simpleMatch(seq: number, ts: string, price: string, size: string, market = 'BTC-PERP'): EngineEvent {
  return fill(seq, ts, {
    market,
    price,
    size,
    takerSide: 'buy',
    legs: [
      leg({ party: A, role: 'taker', side: 'buy', size, price, positionId: 'pa1', positionSize: size, entryPrice: price }),
      leg({ party: B, role: 'maker', side: 'sell', size, price, positionId: 'pb1', positionSize: `-${size}`, entryPrice: price }),
    ],
  });
}
