// One shape for a public trade, REST and live: GET /v1/trades gives `Trade` records, the stream's
// `trade` frames carry the same facts in a frame's envelope (seq, ts, market) and payload. toTrade
// turns a frame into the REST record, so a tape, a chart or a React hook keeps one type.
import type { Trade, TradeFrame } from './generated/wire.js';

/** The REST `Trade` record of a `trade` frame (snapshot or live). */
export function toTrade(frame: TradeFrame): Trade {
  const p = frame.payload;
  return { seq: frame.seq, matchId: p.matchId, market: frame.market, side: p.side, price: p.price, size: p.size, createdAt: frame.ts };
}
