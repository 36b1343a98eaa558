import { describe, expect, it } from 'vitest';
import { initialProjectionState, project } from '../../../src/projections/index.js';
import { initialPositions, projectPositions } from '../../../src/projections/positions.js';
import { projectTrade } from '../../../src/projections/trades.js';
import { A, B, fill, leg, simpleMatch, tick } from './fixtures.js';

const TS = '2026-11-21T10:00:05.000Z';

describe('position.update, balance.update and trade from fills', () => {
  it('a simple match gives, in order: the raw event, position+balance per leg, one trade, candle updates', () => {
    const event = simpleMatch(7, TS, '100.5', '2');
    const { frames } = project(initialProjectionState(), event);
    expect(frames.map((f) => f.kind)).toEqual([
      'engine.order_filled',
      'position.update',
      'balance.update',
      'position.update',
      'balance.update',
      'trade',
      ...Array(8).fill('candle.update'),
    ]);
    expect(frames[0]).toEqual(event);
    expect(frames[1]).toEqual({
      kind: 'position.update',
      seq: 7,
      ts: TS,
      market: 'BTC-PERP',
      userParty: A,
      payload: { positionId: 'pa1', size: '2.0000000000', entryPrice: '100.5000000000', realizedPnl: '0.0000000000', asOfSeq: 7 },
    });
    expect(frames[2]).toEqual({ kind: 'balance.update', seq: 7, ts: TS, userParty: A, payload: { balance: '1000.0000000000', asOfSeq: 7 } });
    expect(frames[3]!.payload).toEqual({ positionId: 'pb1', size: '-2.0000000000', entryPrice: '100.5000000000', realizedPnl: '0.0000000000', asOfSeq: 7 });
    expect(frames[5]).toEqual({
      kind: 'trade',
      seq: 7,
      ts: TS,
      market: 'BTC-PERP',
      payload: { matchId: 'm7', side: 'buy', size: '2.0000000000', price: '100.5000000000', takerOrderId: 'taker-order', makerOrderId: 'maker-order' },
    });
  });

  it('a flip sends the old epoch closed (size 0) first, then the new epoch with realized PnL 0', () => {
    // A is long 1 (epoch pa1) and sells 3 as taker: closes pa1 (+5 PnL) and opens pa2 short 2.
    const event = fill(20, TS, {
      price: '105',
      size: '3',
      takerSide: 'sell',
      legs: [
        leg({ party: A, role: 'taker', side: 'sell', size: '1', price: '105', positionId: 'pa1', positionSize: '0', entryPrice: '100', realizedPnl: '5', newBalance: '1004.9' }),
        leg({ party: A, role: 'taker', side: 'sell', size: '2', price: '105', positionId: 'pa2', positionSize: '-2', entryPrice: '105', realizedPnl: '0', newBalance: '1004.8' }),
        leg({ party: B, role: 'maker', side: 'buy', size: '3', price: '105', positionId: 'pb9', positionSize: '3', entryPrice: '105' }),
      ],
    });
    const { frames } = project(initialProjectionState(), event);
    const positions = frames.filter((f) => f.kind === 'position.update');
    expect(positions.map((f) => [f.userParty, f.payload])).toEqual([
      [A, { positionId: 'pa1', size: '0.0000000000', entryPrice: '100.0000000000', realizedPnl: '5.0000000000', asOfSeq: 20 }],
      [A, { positionId: 'pa2', size: '-2.0000000000', entryPrice: '105.0000000000', realizedPnl: '0.0000000000', asOfSeq: 20 }],
      [B, { positionId: 'pb9', size: '3.0000000000', entryPrice: '105.0000000000', realizedPnl: '0.0000000000', asOfSeq: 20 }],
    ]);
    expect(frames.filter((f) => f.kind === 'balance.update').map((f) => f.payload.balance)).toEqual(['1004.9000000000', '1004.8000000000', '1000.0000000000']);
    // The flip's two taker legs are one match: one trade with the match size.
    const trades = frames.filter((f) => f.kind === 'trade');
    expect(trades).toHaveLength(1);
    expect(trades[0]!.payload).toEqual({ matchId: expect.stringMatching(/^m\d+$/), side: 'sell', size: '3.0000000000', price: '105.0000000000', takerOrderId: 'taker-order', makerOrderId: 'maker-order' });
    // …and one trade in the candles.
    const oneMinute = frames.find((f) => f.kind === 'candle.update' && f.interval === '1m')!;
    expect(oneMinute.payload).toMatchObject({ trades: 1, volume: '3.0000000000' });
  });

  it('asOfSeq never goes back for a positionId', () => {
    const state = initialPositions();
    const late = simpleMatch(30, TS, '100', '1');
    const stale = simpleMatch(25, TS, '99', '1');
    expect(projectPositions(state, late).frames.map((f) => f.payload.asOfSeq)).toEqual([30, 30]);
    expect(projectPositions(state, stale).frames).toEqual([]);
    expect(projectPositions(state, simpleMatch(31, TS, '101', '1')).frames.map((f) => f.payload.asOfSeq)).toEqual([31, 31]);
  });

  it('a closed epoch is forgotten (ids are never reused), so state does not grow with history', () => {
    const state = initialPositions();
    projectPositions(state, simpleMatch(1, TS, '100', '1'));
    expect(state.asOf.size).toBe(2);
    const close = fill(2, TS, {
      price: '100',
      size: '1',
      takerSide: 'sell',
      legs: [
        leg({ party: A, role: 'taker', side: 'sell', size: '1', positionId: 'pa1', positionSize: '0' }),
        leg({ party: B, role: 'maker', side: 'buy', size: '1', positionId: 'pb1', positionSize: '0' }),
      ],
    });
    expect(projectPositions(state, close).frames.map((f) => f.payload.size)).toEqual(['0.0000000000', '0.0000000000']);
    expect(state.asOf.size).toBe(0);
  });

  it('non-fill events give only their passthrough frame; a malformed fill gives no domain frames', () => {
    expect(project(initialProjectionState(), tick(3, TS)).frames).toEqual([{ seq: 3, kind: 'engine.tick_start', ts: TS, payload: { tick: 3 } }]);
    const broken = { ...simpleMatch(4, TS, '100', '1'), payload: { legs: 'nope' } };
    expect(project(initialProjectionState(), broken).frames.map((f) => f.kind)).toEqual(['engine.order_filled']);
    expect(projectTrade(broken)).toEqual([]);
    const unknownKind = { seq: 5, kind: 'engine.something_new', ts: TS, payload: {} };
    expect(project(initialProjectionState(), unknownKind).frames).toEqual([]);
  });

  it('a user-scoped passthrough event keeps its party and market', () => {
    const e = { seq: 9, kind: 'engine.order_cancelled', ts: TS, market: 'BTC-PERP', party: A, payload: { orderId: 'o1', reason: 'user' } };
    expect(project(initialProjectionState(), e).frames).toEqual([e]);
  });
});
