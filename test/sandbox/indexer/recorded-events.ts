// A recorded engine history (docs/engine.md "Event stream") covering every kind the indexer projects: an
// order partially filled then filled, a flip through zero (two legs), an attached TP that is
// armed and fires, a position TP/SL that is cancelled, a chain deposit and a faucet deposit, an
// approved and a rejected withdrawal, a session, two user batches and their manifest.
import type { EngineEvent } from '../../../sandbox/indexer/rows.js';

export const A = `alice::${'a'.repeat(64)}`;
export const B = `bob::${'b'.repeat(64)}`;
const ts = (n: number): string => new Date(Date.UTC(2026, 10, 21, 10, 0, 0, n * 10)).toISOString();

function order(o: Partial<Record<string, unknown>> & { orderId: string; party: string; side: string; size: string; price: string | null; seq: number }): Record<string, unknown> {
  return {
    market: 'BTC-PERP',
    type: o.price === null ? 'market' : 'limit',
    tif: 'gtc',
    filledSize: '0.0000000000',
    avgPrice: null,
    status: 'open',
    reduceOnly: false,
    clientOrderId: null,
    tp: null,
    sl: null,
    createdAt: ts(o.seq),
    updatedAt: ts(o.seq),
    ...o,
  };
}

function leg(l: Record<string, unknown>): Record<string, unknown> {
  return { fee: '0', ...l };
}

export const EVENTS: EngineEvent[] = [
  { seq: 1, kind: 'session.authorized', ts: ts(1), party: A, payload: { sessionId: 's1', sessionPublicKey: 'c'.repeat(64), expiresAt: '2026-11-21T11:00:00.000Z' } },
  { seq: 2, kind: 'inbound.deposit', ts: ts(2), party: A, payload: { depositId: 'd1', amount: '10000', source: 'chain', txId: `0x${'d1'.repeat(32)}`, newBalance: '10000' } },
  { seq: 3, kind: 'inbound.deposit', ts: ts(3), party: B, payload: { depositId: 'd2', amount: '5000.5', source: 'faucet', txId: null, newBalance: '5000.5' } },
  // Bob rests a sell of 2 @ 100; Alice buys 1 (partial), then 1 more (filled).
  { seq: 4, kind: 'engine.order_placed', ts: ts(4), market: 'BTC-PERP', party: B, payload: { order: order({ orderId: 'o1', party: B, side: 'sell', size: '2', price: '100', seq: 4, clientOrderId: 'bob-1' }) } },
  { seq: 5, kind: 'engine.order_placed', ts: ts(5), market: 'BTC-PERP', party: A, payload: { order: order({ orderId: 'o2', party: A, side: 'buy', size: '1', price: null, seq: 5, tif: 'ioc', tp: { triggerPrice: '110', limitPrice: null, size: null } }) } },
  {
    seq: 6, kind: 'engine.order_filled', ts: ts(6), market: 'BTC-PERP',
    payload: { matchId: 'm1', price: '100', size: '1', takerSide: 'buy', takerOrderId: 'o2', makerOrderId: 'o1', legs: [
      leg({ party: A, orderId: 'o2', role: 'taker', side: 'buy', size: '1', price: '100', fee: '0.05', positionId: 'pA1', positionSize: '1', entryPrice: '100', realizedPnl: '0', newBalance: '9999.95' }),
      leg({ party: B, orderId: 'o1', role: 'maker', side: 'sell', size: '1', price: '100', positionId: 'pB1', positionSize: '-1', entryPrice: '100', realizedPnl: '0', newBalance: '5000.5' }),
    ] },
  },
  { seq: 7, kind: 'engine.trigger_set', ts: ts(7), market: 'BTC-PERP', party: A, payload: { trigger: { triggerId: 't1', party: A, market: 'BTC-PERP', kind: 'tp', status: 'armed', triggerPrice: '110', limitPrice: null, size: null, firedSize: null, firedLimit: null, positionId: 'pA1' } } },
  { seq: 8, kind: 'engine.attached_resolved', ts: ts(8), market: 'BTC-PERP', party: A, payload: { orderId: 'o2', triggerId: 't1', outcome: 'armed' } },
  { seq: 9, kind: 'engine.order_placed', ts: ts(9), market: 'BTC-PERP', party: A, payload: { order: order({ orderId: 'o3', party: A, side: 'buy', size: '1', price: '101', seq: 9 }) } },
  {
    seq: 10, kind: 'engine.order_filled', ts: ts(10), market: 'BTC-PERP',
    payload: { matchId: 'm2', price: '102', size: '1', takerSide: 'buy', takerOrderId: 'o3', makerOrderId: 'o1', legs: [
      leg({ party: A, orderId: 'o3', role: 'taker', side: 'buy', size: '1', price: '102', fee: '0.051', positionId: 'pA1', positionSize: '2', entryPrice: '101', realizedPnl: '0', newBalance: '9999.899' }),
      leg({ party: B, orderId: 'o1', role: 'maker', side: 'sell', size: '1', price: '102', positionId: 'pB1', positionSize: '-2', entryPrice: '101', realizedPnl: '0', newBalance: '5000.5' }),
    ] },
  },
  // Alice flips: sells 3 against Bob's bid: closing leg (old epoch to 0) then opening leg (new epoch).
  { seq: 11, kind: 'engine.order_placed', ts: ts(11), market: 'BTC-PERP', party: B, payload: { order: order({ orderId: 'o4', party: B, side: 'buy', size: '5', price: '105', seq: 11 }) } },
  {
    seq: 12, kind: 'engine.order_filled', ts: ts(12), market: 'BTC-PERP',
    payload: { matchId: 'm3', price: '105', size: '3', takerSide: 'sell', takerOrderId: 'o5', makerOrderId: 'o4', legs: [
      leg({ party: A, orderId: 'o5', role: 'taker', side: 'sell', size: '2', price: '105', fee: '0.105', positionId: 'pA1', positionSize: '0', entryPrice: '101', realizedPnl: '8', newBalance: '10007.794' }),
      leg({ party: A, orderId: 'o5', role: 'taker', side: 'sell', size: '1', price: '105', fee: '0.0525', positionId: 'pA2', positionSize: '-1', entryPrice: '105', realizedPnl: '0', newBalance: '10007.7415' }),
      leg({ party: B, orderId: 'o4', role: 'maker', side: 'buy', size: '2', price: '105', positionId: 'pB1', positionSize: '0', entryPrice: '101', realizedPnl: '-8', newBalance: '4992.5' }),
      leg({ party: B, orderId: 'o4', role: 'maker', side: 'buy', size: '1', price: '105', positionId: 'pB2', positionSize: '1', entryPrice: '105', realizedPnl: '0', newBalance: '4992.5' }),
    ] },
  },
  { seq: 13, kind: 'engine.trigger_cancelled', ts: ts(13), market: 'BTC-PERP', party: A, payload: { triggerId: 't1' } },
  { seq: 14, kind: 'engine.trigger_set', ts: ts(14), market: 'BTC-PERP', party: B, payload: { trigger: { triggerId: 't2', party: B, market: 'BTC-PERP', kind: 'sl', status: 'armed', triggerPrice: '104', limitPrice: '103.5', size: '0.5', firedSize: null, firedLimit: null, positionId: 'pB2' } } },
  { seq: 15, kind: 'engine.trigger_fired', ts: ts(15), market: 'BTC-PERP', party: B, payload: { triggerId: 't2', orderId: 'o6', firedSize: '0.5', firedLimit: '103.5' } },
  { seq: 16, kind: 'engine.order_cancelled', ts: ts(16), market: 'BTC-PERP', party: B, payload: { orderId: 'o4', reason: 'user' } },
  { seq: 17, kind: 'engine.order_rejected', ts: ts(17), market: 'BTC-PERP', party: A, payload: { clientOrderId: 'x', code: 'invalid_price', error: 'off grid' } },
  { seq: 18, kind: 'inbound.withdrawal_request', ts: ts(18), party: A, payload: { withdrawalId: 'w1', amount: '100', nonce: 1 } },
  { seq: 19, kind: 'inbound.withdrawal_request', ts: ts(19), party: A, payload: { withdrawalId: 'w2', amount: '99999', nonce: 2 } },
  { seq: 20, kind: 'engine.tick_start', ts: ts(20), payload: { tick: 1 } },
  { seq: 21, kind: 'engine.approve_submitted', ts: ts(21), party: A, payload: { withdrawalId: 'w1', newBalance: '9907.7415' } },
  { seq: 22, kind: 'engine.reject_submitted', ts: ts(22), party: A, payload: { withdrawalId: 'w2', reason: 'insufficient_collateral' } },
  { seq: 23, kind: 'engine.user_batch_committed', ts: ts(23), party: A, payload: { userSeq: 1, root: 'ab'.repeat(32), prevRoot: '0'.repeat(64), eventCount: 12 } },
  { seq: 24, kind: 'engine.user_batch_committed', ts: ts(24), party: B, payload: { userSeq: 1, root: 'cd'.repeat(32), prevRoot: '0'.repeat(64), eventCount: 9 } },
  { seq: 25, kind: 'outbound.batch_committed', ts: ts(25), payload: { batchNum: 1, root: 'ef'.repeat(32), prevRoot: '0'.repeat(64), userBatchCount: 2, firstSeq: 1, lastSeq: 22 } },
];

export { ts };
