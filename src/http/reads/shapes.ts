// Response record and query schemas shared by the read plugins. Field names are the camelCase
// versions of the indexer's columns; decimals are 10-place strings, seqs integers, times ISO.
import { Type, type TSchema } from 'typebox';
import { Before, Decimal, DECIMAL_PATTERN, List, Market, MAX_SEQ, NullableDecimal, NullableSeq, NullableTimestamp, Party, Seq, Since, Timestamp, Limit } from '../schemas.js';

/** A string restricted to a value set, as `{type: string, enum}` (clear 400 messages). */
export function StringEnum<const T extends readonly string[]>(values: T, description?: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
}

export const PAGE_RULE =
  'Pages are cut by seq: a page holds the first `limit` rows plus every further row sharing the seq of its last row, ' +
  'so the rows of one seq (e.g. the legs of one fill event) are never split and a page may exceed `limit`.';

export const NullableString = Type.Union([Type.String(), Type.Null()]);

export const Vault = Type.Object({
  operator: Type.String(),
  contractId: Type.String(),
  totalDeposits: Decimal,
  totalWithdrawals: Decimal,
  balance: Decimal,
  userCount: Type.Integer(),
  updatedSeq: Seq,
  updatedAt: Timestamp,
});

export const Deposit = Type.Object({
  seq: Seq,
  depositId: Type.String(),
  party: Party,
  amount: Decimal,
  source: StringEnum(['chain', 'faucet'] as const),
  txId: NullableString,
  createdAt: Timestamp,
});

export const Withdrawal = Type.Object({
  seq: Seq,
  withdrawalId: Type.String(),
  party: Party,
  amount: Decimal,
  nonce: Type.Integer(),
  status: StringEnum(['requested', 'approved', 'rejected'] as const),
  reason: NullableString,
  decidedSeq: NullableSeq,
  createdAt: Timestamp,
  decidedAt: NullableTimestamp,
});

export const WithdrawalCounter = Type.Object({ party: Party, nonce: Type.Integer({ minimum: 0 }) });

export const Batch = Type.Object({
  batchNum: Type.Integer(),
  root: Type.String(),
  prevRoot: Type.String(),
  userBatchCount: Type.Integer(),
  firstSeq: Seq,
  lastSeq: Seq,
  txId: NullableString,
  committedAt: Timestamp,
});

export const UserBatch = Type.Object({
  party: Party,
  userSeq: Type.Integer(),
  batchNum: Type.Union([Type.Integer(), Type.Null()]),
  root: Type.String(),
  prevRoot: Type.String(),
  eventCount: Type.Integer(),
  txId: NullableString,
  committedAt: Timestamp,
});

export const Order = Type.Object({
  orderId: Type.String(),
  party: Party,
  market: Type.String(),
  side: Type.String(),
  type: Type.String(),
  tif: Type.String(),
  price: NullableDecimal,
  size: Decimal,
  filledSize: Decimal,
  avgPrice: NullableDecimal,
  status: StringEnum(['open', 'partially_filled', 'filled', 'cancelled', 'rejected'] as const),
  clientOrderId: NullableString,
  reduceOnly: Type.Boolean(),
  tpTriggerPrice: NullableDecimal,
  tpLimitPrice: NullableDecimal,
  tpSize: NullableDecimal,
  slTriggerPrice: NullableDecimal,
  slLimitPrice: NullableDecimal,
  slSize: NullableDecimal,
  createdSeq: Seq,
  updatedSeq: Seq,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const UserOrder = Type.Object({
  ...Order.properties,
  source: StringEnum(['mirror', 'engine'] as const, '`engine` when the row is the engine\'s live view, `mirror` otherwise'),
});

export const Fill = Type.Object({
  fillId: Type.String(),
  seq: Seq,
  leg: Type.Integer({ minimum: 0 }),
  matchId: Type.String(),
  orderId: Type.String(),
  party: Party,
  market: Type.String(),
  side: Type.String(),
  role: StringEnum(['taker', 'maker'] as const),
  size: Decimal,
  price: Decimal,
  fee: Decimal,
  realizedPnl: Decimal,
  newBalance: Decimal,
  positionId: Type.String(),
  createdAt: Timestamp,
});

export const Position = Type.Object({
  positionId: Type.String(),
  party: Party,
  market: Type.String(),
  size: Decimal,
  entryPrice: Decimal,
  realizedPnl: Decimal,
  status: StringEnum(['open', 'closed'] as const),
  openedSeq: Seq,
  updatedSeq: Seq,
  closedSeq: NullableSeq,
  openedAt: Timestamp,
  updatedAt: Timestamp,
  closedAt: NullableTimestamp,
});

export const Trigger = Type.Object({
  triggerId: Type.String(),
  party: Party,
  market: Type.String(),
  kind: StringEnum(['tp', 'sl'] as const),
  status: StringEnum(['armed', 'cancelled', 'fired'] as const),
  triggerPrice: Decimal,
  limitPrice: NullableDecimal,
  size: NullableDecimal,
  firedSize: NullableDecimal,
  firedLimit: NullableDecimal,
  positionId: NullableString,
  parentOrderId: NullableString,
  firedOrderId: NullableString,
  createdSeq: Seq,
  updatedSeq: Seq,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const BalanceBody = Type.Object({ party: Party, balance: Decimal, asOfSeq: NullableSeq });

/** GET /v1/users/:party/account/as-of (docs/account.md "As of a seq"): what the mirror recorded at or before a seq. */
export const AccountAsOf = Type.Object(
  {
    party: Party,
    asOfSeq: Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'The seq asked for: every number is as the events up to it left it' }),
    head: Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'The newest seq the mirror held when it answered' }),
    collateral: Type.String({ pattern: DECIMAL_PATTERN, description: 'Cash collateral after the newest deposit, approved withdrawal or fill leg of the party at or before asOfSeq ("0.0000000000" without one)' }),
    collateralAsOfSeq: Type.Union([Seq, Type.Null()], { description: 'Seq of that event; null when none' }),
    positions: Type.Array(
      Type.Object({
        positionId: Type.String({ description: 'Epoch identity of the position' }),
        market: Market,
        size: Type.String({ pattern: DECIMAL_PATTERN, description: 'Signed size after the last fill leg of the party in this market at or before asOfSeq (never zero: a closed epoch is not listed)' }),
        entryPrice: Decimal,
        realizedPnl: Type.String({ pattern: DECIMAL_PATTERN, description: 'Realized PnL of the epoch so far' }),
        asOfSeq: Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'Seq of that fill leg' }),
      }),
      { description: 'Each epoch open at asOfSeq, by market' },
    ),
  },
  { description: "The party's collateral and open positions as its fill legs, deposits and approved withdrawals up to a seq left them" },
);

const VerificationStatus = StringEnum(['match', 'mismatch', 'pending'] as const);

export const UserBatchVerification = Type.Object({
  party: Party,
  userSeq: Type.Integer(),
  engineRoot: Type.String(),
  chainRoot: NullableString,
  status: VerificationStatus,
  engineSeq: Seq,
  committedAt: NullableTimestamp,
});

export const ManifestVerification = Type.Object({
  batchNum: Type.Integer(),
  engineRoot: Type.String(),
  chainRoot: NullableString,
  status: VerificationStatus,
  engineSeq: Seq,
  committedAt: NullableTimestamp,
});

export const EventEnvelope = Type.Object({
  seq: Seq,
  kind: Type.String(),
  ts: Timestamp,
  market: Type.Optional(Type.String()),
  party: Type.Optional(Type.String()),
  payload: Type.Object({}, { additionalProperties: true, description: 'The engine event payload, as the engine sent it' }),
});

/** A newest-first list with the page rule in its description. */
export function NewestFirst<T extends TSchema>(item: T, cursor = 'seq') {
  return { ...List(item, `pass back as \`before\` (a ${cursor})`), description: PAGE_RULE };
}

export { Before, Since, Limit, Market, Party };

/** `limit` as a query parameter: optional (default 100) in the OpenAPI description. */
export const DEFAULT_LIMIT = 100;
export const OptLimit = Type.Optional(Limit);
