// OpenAPI shapes of the trading proxy (docs/engine.md). They document the wire; the engine, not
// the gateway, enforces the trading grammar (grids, sides, tif…), so bodies are not validated here
// (see docs/trading.md: a second copy of the grammar would drift and turn the engine's typed
// HTTP 200 `ok:false` rejections into gateway 400s).
import { Type, type TSchema } from 'typebox';
import { Market, Party } from '../schemas.js';

/** Decimal input: 0–10 decimals, plain notation (the engine rejects anything else). */
const DecimalIn = Type.String({ pattern: '^-?\\d+(\\.\\d{1,10})?$', description: 'Decimal string with 0 to 10 decimals, e.g. "0.5" or "65000"' });
const Decimal10 = Type.String({ pattern: '^-?\\d+\\.\\d{10}$', description: 'Decimal string with exactly 10 decimals, e.g. "65000.0000000000"' });
const Side = Type.Union([Type.Literal('buy'), Type.Literal('sell')]);
const Id = Type.String({ minLength: 1, maxLength: 64 });

export const Rejection = Type.Object(
  {
    ok: Type.Literal(false),
    code: Type.String({
      description:
        'Engine rejection code: invalid_size, invalid_price, below_min_notional (may be sent as 0x0C), market_unsupported, market_required, insufficient_margin, reduce_only_violation, post_only_would_cross, unknown_order, order_not_open, no_position, invalid_signature, session_expired, …',
    }),
    error: Type.String(),
  },
  { description: 'Business rejection, answered with HTTP 200: check `ok` before using the body' },
);

function okOrRejected(success: TSchema, description: string): TSchema {
  return Type.Union([success, Rejection], { description: `${description}. HTTP 200 carries either the success body or an \`ok:false\` rejection.` });
}

const LegIn = Type.Object({ triggerPrice: DecimalIn, limitPrice: Type.Optional(DecimalIn) });
const TpslLeg = Type.Union([
  Type.Object({ triggerPrice: DecimalIn, limitPrice: Type.Optional(DecimalIn), size: Type.Optional(DecimalIn) }),
  Type.Null(),
]);

export const SessionAuthBody = Type.Object({
  party: Party,
  sessionPublicKey: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Ephemeral ed25519 session public key (hex)' }),
  expiresAt: Type.Integer({ description: 'Unix ms; at most 24 h ahead' }),
  signature: Type.String({
    pattern: '^[0-9a-f]{128}$',
    description: 'Party key signature over `session-auth\\n<party>\\n<sessionPublicKey>\\n<expiresAt>`',
  }),
});
export const SessionAuthAnswer = okOrRejected(
  Type.Object({ ok: Type.Literal(true), sessionId: Id, expiresAt: Type.Integer() }),
  'Session created',
);

export const OrderBody = Type.Object({
  market: Market,
  side: Side,
  type: Type.Union([Type.Literal('limit'), Type.Literal('market')]),
  size: DecimalIn,
  price: Type.Optional(DecimalIn),
  tif: Type.Optional(Type.Union([Type.Literal('gtc'), Type.Literal('ioc'), Type.Literal('alo')])),
  reduceOnly: Type.Optional(Type.Boolean()),
  clientOrderId: Type.Optional(Id),
  tp: Type.Optional(LegIn),
  sl: Type.Optional(LegIn),
});
export const OrderAnswer = okOrRejected(
  Type.Object({
    ok: Type.Literal(true),
    orderId: Id,
    status: Type.String(),
    filledSize: Decimal10,
    avgPrice: Type.Union([Decimal10, Type.Null()]),
    reason: Type.Optional(
      Type.Union([Type.Literal('user'), Type.Literal('ioc'), Type.Literal('margin'), Type.Literal('reduce_only')], {
        description: 'Added by the gateway when the order ended at once (status cancelled): ioc = no more liquidity for an IOC or market order; margin; reduce_only',
      }),
    ),
  }),
  'Order accepted',
);

export const CancelParams = Type.Object({ orderId: Id });
export const CancelAnswer = okOrRejected(
  Type.Object({ ok: Type.Literal(true), orderId: Id, status: Type.Literal('cancelled') }),
  'Order cancelled',
);

export const TpslBody = Type.Object({ market: Market, tp: Type.Optional(TpslLeg), sl: Type.Optional(TpslLeg) });
export const TpslAnswer = okOrRejected(
  Type.Object({
    ok: Type.Literal(true),
    triggers: Type.Array(Type.Object({ triggerId: Id, kind: Type.Union([Type.Literal('tp'), Type.Literal('sl')]), status: Type.String() })),
  }),
  'Triggers set',
);

export const OrderbookQuery = Type.Object({
  depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Levels per side, 1..100 (default 20)' })),
  market: Type.Optional(Market),
});
export const Orderbook = Type.Object({
  market: Type.String(),
  seq: Type.Integer(),
  depth: Type.Integer(),
  // [price, size] pairs; a 2-item array rather than a tuple, which OpenAPI 3.0 cannot express.
  bids: Type.Array(Type.Array(Decimal10, { minItems: 2, maxItems: 2 }), { description: '[price, size] levels, best first' }),
  asks: Type.Array(Type.Array(Decimal10, { minItems: 2, maxItems: 2 }), { description: '[price, size] levels, best first' }),
});

export const UserMeAnswer = okOrRejected(
  Type.Object(
    {
      ok: Type.Literal(true),
      party: Party,
      balance: Decimal10,
      positions: Type.Array(Type.Object({}, { additionalProperties: true })),
      openOrders: Type.Array(Type.Object({}, { additionalProperties: true })),
      triggers: Type.Array(Type.Object({}, { additionalProperties: true })),
    },
    { description: 'Engine positions, open orders and triggers (docs/engine.md "Orders and matching")' },
  ),
  'The party as the engine sees it',
);

export const FaucetAnswer = Type.Object({
  party: Party,
  amount: Decimal10,
  newBalance: Decimal10,
});

export const SIGNED = [{ xUser: [], xSessionId: [], xSessionSig: [] }];
