// TypeBox schemas of the order book frames of delta connections (docs/stream.md "Order book
// deltas"); the spec's polled orderbook.snapshot keeps its own schema in schemas.ts.
import { Type } from 'typebox';
import { Decimal, Market, Seq, Timestamp } from '../contracts/wire.js';

const strict = { additionalProperties: false } as const;

export const ViewLevel = Type.Tuple([Decimal, Decimal, Type.Integer({ minimum: 0, description: 'Orders at this level (0 on a removed level)' })], {
  description: '[price, size, orderCount]; in a delta, size "0.0000000000" means the level left the view',
});

const ViewFields = {
  depth: Type.Integer({ minimum: 1, maximum: 1000, description: 'Levels per side of this view (the connection\'s `depth`)' }),
  grouping: Type.String({ description: 'The connection\'s `group`: none, sig:<2..5> or tick:<decimal>' }),
  bookSeq: { ...Seq, description: 'Seq of the last engine event that changed this market\'s book (the engine\'s book seq)' },
  checksum: Type.Integer({
    minimum: 0,
    maximum: 4294967295,
    description: 'CRC-32 (IEEE) of the first 25 levels of the view, interleaved bid then ask as price:size pairs joined by ":" (docs/stream.md)',
  }),
};

/** The payload of an orderbook.snapshot sent to a delta connection (the view whole). */
export const ViewSnapshotPayload = Type.Object(
  { ...ViewFields, bids: Type.Array(ViewLevel), asks: Type.Array(ViewLevel) },
  { ...strict, description: 'Delta connections (kinds include orderbook.delta): the view whole, from the book kept from events' },
);

export const OrderbookDeltaFrame = Type.Object(
  {
    kind: Type.Literal('orderbook.delta'),
    seq: { ...Seq, description: 'Seq of the engine event that changed the book' },
    ts: { ...Timestamp, description: 'Engine time of that event' },
    market: Market,
    payload: Type.Object(
      {
        ...ViewFields,
        prevBookSeq: { ...Seq, description: 'bookSeq of the previous frame of this view: apply only when it is the bookSeq you hold, else resubscribe' },
        bids: Type.Array(ViewLevel, { description: 'Changed bid levels' }),
        asks: Type.Array(ViewLevel, { description: 'Changed ask levels' }),
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Opt-in (kinds=orderbook.delta, with depth= and group=): the levels of the connection\'s book view that one engine event changed, after its orderbook.snapshot.',
  },
);
