// What the database hands the account reducer for one party (src/db/queries/account.ts →
// src/projections/account.ts, docs/account.md), and the one engine rule both sides apply: which
// part of a position an order on a side closes.

export interface SeedOrder {
  orderId: string;
  market: string;
  side: 'buy' | 'sell';
  price: string | null;
  remaining: string;
  rests: boolean;
  /**
   * Opening size reserved at rest, from the position after the order's own taker matches the
   * snapshot holds. Exact even when the snapshot ends while the order is still matching: each
   * later own fill lowers the remaining and the part to close alike, or the remaining below the
   * opening, so the reservation at rest is `min(opening, remaining)` (what the reducer keeps).
   */
  opening: string;
  updatedSeq: number;
}

/** What the database says about one party, consistent as of `asOfSeq`. */
export interface AccountSeed {
  asOfSeq: number;
  balance: { value: string; seq: number } | null;
  positions: Array<{ positionId: string; market: string; size: string; entryPrice: string; realizedPnl: string; updatedSeq: number }>;
  orders: SeedOrder[];
  marks: Array<{ market: string; price: string; seq: number }>;
  leverage: Array<{ market: string; maxLeverage: number }>;
}

/** The part of a signed position on the other side of `side` (what an order on `side` closes). */
export function reducible(position: bigint, side: 'buy' | 'sell'): bigint {
  if (side === 'buy') return position < 0n ? -position : 0n;
  return position > 0n ? position : 0n;
}
