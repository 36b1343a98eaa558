// The seed of one market's order book kept from events (docs/stream.md "Order book from events"):
// the mirror's resting orders of the market, order by order, as of the newest event of the same
// snapshot. Run it with Database.readSnapshot (REPEATABLE READ): the indexer writes each event and
// its projections in one transaction, so the orders are exactly the engine's after `asOfSeq`.
//
// A placed limit order that is not IOC and not yet terminal may rest; one still crossing the book
// at `asOfSeq` (the snapshot fell inside its own matching) is held back by the book itself
// (MarketBook.seedOrders), as a live placement is.
// Indexes: orders (status, created_seq desc) (the project's `orders_status_created`, docs/rest.md
// "Indexes beyond the contract": the contract's (party, status) does not lead with the status),
// events pk.
import type { Queryable } from '../database.js';
import type { BookSeed, BookSeedOrder } from '../../contracts/book-seed.js';
import { eventsAfter } from './events.js';

export async function loadBookSeed(tx: Queryable, market: string, anchorSeq: number | null = null): Promise<BookSeed | null> {
  const [head] = await tx<{ seq: number | null }[]>`SELECT max(seq) AS seq FROM events`;
  if (head?.seq === null || head?.seq === undefined) return null;
  const orders = await tx<BookSeedOrder[]>`
    SELECT order_id, side, price::text AS price, (size - filled_size)::text AS remaining
    FROM orders
    WHERE status IN ('open', 'partially_filled') AND market = ${market} AND type = 'limit' AND tif <> 'ioc' AND price IS NOT NULL
    ORDER BY created_seq, order_id`;
  const seed: BookSeed = { asOfSeq: Number(head.seq), orders: orders.map((o) => ({ orderId: o.orderId, side: o.side, price: o.price, remaining: o.remaining })) };
  if (anchorSeq !== null) {
    const [anchor] = await eventsAfter(tx, anchorSeq - 1, 1);
    seed.anchor = anchor?.seq === anchorSeq ? anchor : null;
  }
  return seed;
}
