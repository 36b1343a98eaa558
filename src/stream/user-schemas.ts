// TypeBox schemas of the user channel frames (docs/stream.md "User channels").
import { Type } from 'typebox';
import { Decimal, Market, Party, Seq, Timestamp } from '../contracts/wire.js';

const strict = { additionalProperties: false } as const;
const SnapshotMark = Type.Optional(Type.Literal(true, { description: 'Present (true) only on the state sent on subscribe (open orders, last fills)' }));
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const OrderUpdateFrame = Type.Object(
  {
    kind: Type.Literal('order.update'),
    seq: { ...Seq, description: 'Seq of the event that changed the order (snapshot: the order\'s last change)' },
    ts: { ...Timestamp, description: 'Engine time of that event' },
    market: Type.Optional(Market),
    userParty: Party,
    snapshot: SnapshotMark,
    payload: Type.Object(
      {
        orderId: Type.Union([Type.String(), Type.Null()], { description: 'null on a rejection (the engine gave the order no id)' }),
        clientOrderId: Type.Union([Type.String(), Type.Null()]),
        side: Type.String({ description: 'buy or sell ("unknown" for an order placed before the gateway watched, or rejected)' }),
        type: Type.String({ description: 'limit or market ("unknown" as for side)' }),
        price: Type.Union([Decimal, Type.Null()]),
        size: Type.Union([Decimal, Type.Null()], { description: 'null when not known to the gateway' }),
        filledSize: Decimal,
        avgPrice: Type.Union([Decimal, Type.Null()], { description: 'Average fill price; null before any fill' }),
        status: Type.Union(['open', 'partially_filled', 'filled', 'cancelled', 'rejected'].map((s) => Type.Literal(s))),
        reason: Type.Union([...['user', 'ioc', 'margin', 'reduce_only', 'rejected'].map((s) => Type.Literal(s)), Type.Null()], {
          description: 'Why a cancelled/rejected order ended: user (cancelled), ioc (IOC or market remainder: no more liquidity), margin, reduce_only, rejected (see code)',
        }),
        code: Nullable(Type.String({ description: 'The engine\'s rejection code (reason rejected)' })),
        error: Nullable(Type.String({ description: 'The engine\'s rejection text' })),
        asOfSeq: Seq,
      },
      strict,
    ),
  },
  { ...strict, description: 'User channel (needs a proven `party`): the order after each change — placed, each fill (partial or full), cancel, rejection.' },
);

export const FillFrame = Type.Object(
  {
    kind: Type.Literal('fill'),
    seq: Seq,
    ts: Timestamp,
    market: Market,
    userParty: Party,
    snapshot: SnapshotMark,
    payload: Type.Object(
      {
        matchId: Type.String(),
        orderId: Type.String(),
        positionId: Type.String(),
        side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
        role: Type.Union([Type.Literal('taker'), Type.Literal('maker')]),
        price: Decimal,
        size: Decimal,
        fee: Decimal,
        realizedPnl: { ...Decimal, description: 'Realized PnL of the position epoch after this leg' },
      },
      strict,
    ),
  },
  { ...strict, description: 'User channel (needs a proven `party`): one of the party\'s own fill legs; other parties\' legs never reach the connection.' },
);
