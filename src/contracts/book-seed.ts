// What the database hands the order book kept from events (src/db/queries/book-seed.ts →
// src/projections/order-book.ts, docs/stream.md "Order book from events"): a market's resting
// orders one by one, consistent as of one seq, so that every later event (a cancel of any of them
// included) applies to the book exactly as it applies to the engine's.

import type { EngineEvent } from './engine-event.js';

export interface BookSeedOrder {
  orderId: string;
  side: 'buy' | 'sell';
  /** Limit price (wire decimal). */
  price: string;
  /** size − filledSize (wire decimal). */
  remaining: string;
}

export interface BookSeed {
  /** Newest seq of the mirror's `events` in the read's snapshot: the orders are those of the engine after this event. */
  asOfSeq: number;
  /** The market's non-terminal limit orders that can rest (not IOC), oldest first. */
  orders: BookSeedOrder[];
  /**
   * The mirror's event at the anchor seq asked for (null: the mirror has no event there). The caller
   * compares its fingerprint (src/engine/fingerprint.ts: seq, kind, engine time and payload) with
   * the event it saw at that seq: the mirror then holds the same history as the stream (after a
   * history replacement it may still hold the old one, whose event at the same seq often has the
   * same kind: a soak's book kept the old history's orders for minutes when only the kind was
   * compared).
   */
  anchor?: EngineEvent | null;
}
