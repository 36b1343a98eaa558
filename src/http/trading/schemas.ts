// Shapes of the trading proxy (docs/engine.md). The request bodies are enforced, by shape only
// (body-shape.ts): the fields the engine contract lists and no other, each of its type (a string
// where the contract has a decimal string, never a number), enums, documented lengths, a documented
// size. The trading grammar itself (decimal format, grids, minimum notional, margin) stays the
// engine's: a second copy would drift and turn its typed HTTP 200 `ok:false` rejections into
// gateway 400s (docs/trading.md). The answers are documentation.
import { Type, type TSchema } from 'typebox';
import { Market, Party } from '../schemas.js';
import { ClientOrderId } from '../../contracts/wire.js';

/** The longest decimal string a body may carry (20 integer digits, a point, 10 decimals, a sign, and room). */
export const DECIMAL_MAX_LENGTH = 40;
/**
 * Decimal input: a string of at most DECIMAL_MAX_LENGTH characters. Its format (0 to 10 decimals,
 * plain notation) is the engine's to judge: a malformed one is its ok:false invalid_size/invalid_price.
 */
const DecimalIn = Type.String({
  maxLength: DECIMAL_MAX_LENGTH,
  description: `Decimal string with 0 to 10 decimals, plain notation, e.g. "0.5" or "65000" (at most ${DECIMAL_MAX_LENGTH} characters; a JSON number is refused 400 invalid_body, a malformed string is the engine's ok:false invalid_size / invalid_price)`,
});
const strict = { additionalProperties: false } as const;
/** An optional field the engine also takes as null (absent). */
const OrNull = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
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

const LegIn = Type.Object({ triggerPrice: DecimalIn, limitPrice: Type.Optional(OrNull(DecimalIn)) }, strict);
const TpslLeg = Type.Union([
  Type.Object({ triggerPrice: DecimalIn, limitPrice: Type.Optional(OrNull(DecimalIn)), size: Type.Optional(OrNull(DecimalIn)) }, strict),
  Type.Null(),
]);

// Session keys and signatures are checked for length, not for hex: a wrong signature is the
// engine's ok:false invalid_signature, which a client must keep telling apart from a malformed call.
export const SessionAuthBody = Type.Object(
  {
    party: Type.String({ maxLength: 114, description: 'Party id `<hint>::<ed25519 public key hex>`' }),
    sessionPublicKey: Type.String({ maxLength: 64, description: 'Ephemeral ed25519 session public key (64 lower-case hex characters)' }),
    expiresAt: Type.Integer({ description: 'Unix ms; at most 24 h ahead' }),
    signature: Type.String({
      maxLength: 128,
      description: 'Party key signature over `session-auth\\n<party>\\n<sessionPublicKey>\\n<expiresAt>` (128 lower-case hex characters)',
    }),
  },
  strict,
);
export const SessionAuthAnswer = okOrRejected(
  Type.Object({ ok: Type.Literal(true), sessionId: Id, expiresAt: Type.Integer() }),
  'Session created',
);

export const OrderBody = Type.Object(
  {
    market: Market,
    side: Side,
    type: Type.Union([Type.Literal('limit'), Type.Literal('market')]),
    size: DecimalIn,
    price: Type.Optional(OrNull(DecimalIn)),
    tif: Type.Optional(Type.Union([Type.Literal('gtc'), Type.Literal('ioc'), Type.Literal('alo')])),
    reduceOnly: Type.Optional(Type.Boolean()),
    clientOrderId: Type.Optional(OrNull(ClientOrderId())),
    tp: Type.Optional(OrNull(LegIn)),
    sl: Type.Optional(OrNull(LegIn)),
  },
  { ...strict, description: 'The engine order request (docs/engine.md): these fields and no other' },
);
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

export const TpslBody = Type.Object({ market: Market, tp: Type.Optional(TpslLeg), sl: Type.Optional(TpslLeg) }, strict);
/** The signed body of GET /v1/user/me (and of its POST twin). */
export const UserMeBody = Type.Object({ party: Type.String({ maxLength: 114, description: 'The party id, = X-User' }) }, strict);
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

export const FaucetStatus = Type.Object({
  party: Party,
  amount: Decimal10,
  cooldownS: Type.Integer({ minimum: 0, description: 'FAUCET_COOLDOWN_S: the least time between two top-ups of one party' }),
  retryAfterS: Type.Integer({ minimum: 0, description: 'Seconds until a top-up is allowed again; 0 when it is now' }),
  nextAt: Type.Union([Type.String({ description: 'When the cooldown ends (ISO 8601 UTC)' }), Type.Null()], { description: 'null when a top-up is allowed now' }),
});

export const SIGNED = [{ xUser: [], xSessionId: [], xSessionSig: [] }];
