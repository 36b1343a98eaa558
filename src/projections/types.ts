// The payload of an `engine.order_filled` event, as the projections read it (docs/engine.md
// "Event stream"). Engine events and frames themselves are in src/contracts/.

export interface FillLeg {
  party: string;
  orderId: string;
  role: 'taker' | 'maker';
  side: 'buy' | 'sell';
  size: string;
  price: string;
  fee: string;
  positionId: string;
  positionSize: string;
  entryPrice: string;
  realizedPnl: string;
  newBalance: string;
}

export interface FillPayload {
  matchId: string;
  price: string;
  size: string;
  takerSide: 'buy' | 'sell';
  takerOrderId: string;
  makerOrderId: string;
  legs: FillLeg[];
}
