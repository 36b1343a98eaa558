// The account view (docs/account.md): one schema for GET /v1/users/:party/account and the payload
// of the account.update frame.
import { Type } from 'typebox';
import { Decimal, DECIMAL_PATTERN, Market, NullableDecimal, NullableSeq, Party, Seq } from './wire.js';

/** A ratio as a 10-place decimal string. Declared without the Decimal's `examples`: inside a nullable
 * union the OpenAPI 3.0 document would carry them where a Schema Object allows none. */
const Ratio = Type.String({ pattern: DECIMAL_PATTERN, description: 'Ratio as a decimal string with exactly 10 decimal places' });

const Side = Type.Union([Type.Literal('buy'), Type.Literal('sell')]);
const strict = { additionalProperties: false } as const;

export const AccountPosition = Type.Object(
  {
    positionId: Type.String({ description: 'Epoch identity of the position' }),
    market: Market,
    size: { ...Decimal, description: 'Signed size: positive long, negative short' },
    entryPrice: Decimal,
    markPrice: { ...Decimal, description: 'Price of the market\'s latest match; the entry price while the market has none (markSource)' },
    markSource: Type.Union([Type.Literal('last_trade'), Type.Literal('entry_price')]),
    notional: { ...Decimal, description: '|size| × markPrice' },
    unrealizedPnl: { ...Decimal, description: '(markPrice − entryPrice) × size' },
    realizedPnl: { ...Decimal, description: 'Realized PnL of this epoch' },
    initialMargin: { ...Decimal, description: '|size| × entryPrice / maxLeverage: what the engine holds for the position' },
    maxLeverage: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'The market\'s maximum leverage (null: market unknown, margin counted at 1×)' }),
    asOfSeq: Seq,
  },
  strict,
);

export const AccountOrder = Type.Object(
  {
    orderId: Type.String(),
    market: Market,
    side: Side,
    price: NullableDecimal,
    remaining: Decimal,
    margin: { ...Decimal, description: 'Margin the engine holds for the order while it rests (0 for reduce-only and for the part that closes a position)' },
  },
  strict,
);

export const AccountBody = Type.Object(
  {
    party: Party,
    asOfSeq: { ...Seq, description: 'The newest engine event seq the view reflects' },
    collateral: { ...Decimal, description: 'Cash collateral as the engine counts it: every deposit, approved withdrawal and fill (fees and realized PnL)' },
    collateralAsOfSeq: { ...NullableSeq, description: 'Seq of the deposit, withdrawal or fill that set the collateral; null when never funded' },
    positions: Type.Array(AccountPosition),
    orders: Type.Array(AccountOrder, { description: 'Open orders with the margin each holds' }),
    positionMargin: { ...Decimal, description: 'Σ initial margin of the open positions' },
    orderMargin: { ...Decimal, description: 'Σ margin held by resting orders' },
    unrealizedPnl: { ...Decimal, description: 'Σ unrealized PnL at the mark prices' },
    equity: { ...Decimal, description: 'collateral + unrealizedPnl' },
    freeCollateral: {
      ...Decimal,
      description: 'collateral − positionMargin − orderMargin: the initial margin of an opening order (notional / maxLeverage) must fit it, or the engine answers insufficient_margin',
    },
    leverage: Type.Union([Ratio, Type.Null()], { description: 'Σ notional / equity ("0" without positions; null when equity ≤ 0 with positions)' }),
    marginUsage: Type.Union([Ratio, Type.Null()], { description: '(positionMargin + orderMargin) / collateral ("0" with no margin in use; null when collateral ≤ 0 with margin in use)' }),
  },
  strict,
);
