// TypeBox schemas of the conversation on an open /v1/stream connection (docs/stream.md "Talking to
// the socket"): what a client sends (the ops) and what the gateway answers (stream.ack,
// stream.answer, stream.error). The ops are checked against these schemas before they are read
// (client-messages.ts), the answers are checked in tests, and both feed the AsyncAPI document.
import { Type, type TSchema } from 'typebox';
import { CANDLE_INTERVALS, FRAME_KINDS } from '../contracts/frame.js';
import { ClientOrderId, Market, Party, Seq, Timestamp } from '../contracts/wire.js';
import { BatchFields, MAX_BATCH_ITEMS, ReplaceFields } from '../contracts/desk.js';

const strict = { additionalProperties: false } as const;
const MAX_LIST = 100;

export const MessageIdField = Type.Union(
  [Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x20-\\x7E]{1,64}$' }), Type.Integer({ minimum: -9007199254740991, maximum: 9007199254740991 })],
  { description: 'The client\'s id of the message (1..64 printable ASCII characters, or an integer), echoed in its answer' },
);
const Kind = Type.Union(FRAME_KINDS.map((k) => Type.Literal(k)));
const IntervalLiteral = Type.Union(CANDLE_INTERVALS.map((i) => Type.Literal(i)));
const list = (item: TSchema, description: string) => Type.Optional(Type.Array(item, { maxItems: MAX_LIST, description }));
/**
 * The value of a signing header: printable ASCII, as every party id, session id and signature is.
 * A control character (CR, LF, NUL) or a character past Latin-1 is no HTTP header value: refused
 * here (400), it would otherwise fail only when the call is forwarded, as the engine's 502.
 */
export const SIGNING_VALUE_PATTERN = '^[\\x20-\\x7E]*$';
const signingValue = (description: string) => Type.Optional(Type.String({ maxLength: 1024, pattern: SIGNING_VALUE_PATTERN, description }));
const ProofUser = signingValue('X-User: the party id');
const ProofSession = signingValue('X-Session-Id: the session id');
const ProofSig = (what: string) => signingValue(`X-Session-Sig: <tsMs>.<128 hex>, the session key's signature over ${what}`);

// ---- what a client sends ----

export const SubscribeOp = Type.Object(
  {
    op: Type.Literal('subscribe'),
    id: MessageIdField,
    kinds: list(Kind, 'Frame kinds to add (opt-in kinds included)'),
    markets: list(Market, 'Markets to add; each must be one the engine lists (else unknown_market)'),
    intervals: list(IntervalLiteral, 'Candle intervals to add'),
    party: list(Party, 'Parties to add; unless AUTH_DISABLED, proven by user/sessionId/sig exactly as in the URL'),
    user: ProofUser,
    sessionId: ProofSession,
    sig: ProofSig('"GET\\n/v1/stream\\n<tsMs>\\n" (single use)'),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'With orderbook.delta: levels per side of the book view' })),
    group: Type.Optional(Type.String({ maxLength: 64, description: 'With orderbook.delta: none, sig:2..sig:5 or tick:<decimal>' })),
    throttle: Type.Optional(
      Type.Union([Type.Literal(0), Type.Literal(100), Type.Literal(500)], { description: 'With orderbook.delta: at most one conflated delta per 100 or 500 ms (0: every change)' }),
    ),
    snapshot: Type.Optional(Type.Boolean({ description: 'false: no snapshot frames for what was added; default: the connection\'s `snapshot`' })),
  },
  { ...strict, description: 'Adds to the connection\'s filters; answered by stream.ack (then the snapshot frames of what was added) or stream.error.' },
);

export const UnsubscribeOp = Type.Object(
  {
    op: Type.Literal('unsubscribe'),
    id: MessageIdField,
    kinds: list(Kind, 'Frame kinds to remove (orderbook.snapshot stays while the connection keeps orderbook.delta: a book view keeps its snapshots)'),
    markets: list(Market, 'Markets to remove (refused on a connection that receives every market)'),
    intervals: list(IntervalLiteral, 'Candle intervals to remove'),
    party: list(Party, 'Parties to remove'),
  },
  { ...strict, description: 'Removes from the connection\'s filters; answered by stream.ack or stream.error.' },
);

export const PlaceOrderOp = Type.Object(
  {
    op: Type.Literal('order.place'),
    id: MessageIdField,
    body: Type.String({
      description:
        'The order JSON exactly as signed (what POST /v1/orders would carry as its body); one that is not the engine order request\'s shape is refused `invalid_body` (400) as REST refuses it (docs/trading.md)',
    }),
    user: ProofUser,
    sessionId: ProofSession,
    sig: ProofSig('"POST\\n/v1/orders\\n<tsMs>\\n<body>"'),
  },
  { ...strict, description: 'A signed POST /v1/orders; answered by stream.answer (the engine\'s answer) or stream.error (the REST code).' },
);

export const CancelOrderOp = Type.Object(
  {
    op: Type.Literal('order.cancel'),
    id: MessageIdField,
    orderId: Type.String({ minLength: 1, maxLength: 64, description: 'The order to cancel' }),
    user: ProofUser,
    sessionId: ProofSession,
    sig: ProofSig('"DELETE\\n/v1/orders/<encodeURIComponent(orderId)>\\n<tsMs>\\n"'),
  },
  { ...strict, description: 'A signed DELETE /v1/orders/:orderId; answered by stream.answer or stream.error.' },
);

export const BatchOp = Type.Object(
  { op: Type.Literal('order.batch'), id: MessageIdField, ...BatchFields },
  {
    ...strict,
    description: `Up to ${MAX_BATCH_ITEMS} signed place / cancel calls (POST /v1/orders/batch); answered by stream.answer with {results, weight} (every item's outcome, in order) or stream.error when the batch itself is refused.`,
  },
);

export const ReplaceOp = Type.Object(
  { op: Type.Literal('order.replace'), id: MessageIdField, ...ReplaceFields },
  { ...strict, description: 'A signed cancel and a signed place (POST /v1/orders/replace); the place is sent only once the engine confirmed the cancel, and a place the gateway refuses (a clientOrderId the party used or has in flight included) sends nothing. Answered by stream.answer with {cancel, place, replaced}.' },
);

export const OrderStatusOp = Type.Object(
  {
    op: Type.Literal('order.status'),
    id: MessageIdField,
    party: Party,
    clientOrderId: ClientOrderId('The clientOrderId the order was placed with'),
  },
  {
    ...strict,
    description:
      'The party\'s order by its clientOrderId (GET /v1/users/:party/orders/by-client-id/:clientOrderId); the connection must hold the party (proven by the URL or a subscribe). Answered by stream.answer {status: 200, body: {source, order}} or stream.error (403, 404).',
  },
);

const SwitchParty = { ...Party, description: 'The party of the switch; the connection must hold it (proven by the URL or a subscribe)' };
const SwitchName = Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x20-\\x7E]+$', description: 'Which switch of the party (default "default")' }));

export const SwitchArmOp = Type.Object(
  {
    op: Type.Literal('switch.arm'),
    id: MessageIdField,
    party: SwitchParty,
    sessionId: Type.String({ minLength: 1, maxLength: 1024, pattern: SIGNING_VALUE_PATTERN, description: 'The session whose key signed the cancels' }),
    name: SwitchName,
    timeoutMs: Type.Integer({ minimum: 1_000, maximum: 30_000, description: 'Fires this long after the last arm or heartbeat' }),
    cancels: Type.Array(
      Type.Object(
        {
          orderId: Type.String({ minLength: 1, maxLength: 64 }),
          sig: Type.String({ minLength: 1, maxLength: 1024, pattern: SIGNING_VALUE_PATTERN, description: 'X-Session-Sig of DELETE /v1/orders/<encodeURIComponent(orderId)>, timestamped ahead (up to +30 s)' }),
        },
        strict,
      ),
      { maxItems: 200, description: 'Signed cancels of the open orders to cancel when it fires (replaces those held)' },
    ),
  },
  {
    ...strict,
    description:
      'Arms (or re-arms, which is also a heartbeat) the dead man\'s switch: answered by stream.answer {name, cancels, timeoutMs, fireAt, validUntil} or stream.error (docs/trading.md "Dead man\'s switch").',
  },
);

export const SwitchHeartbeatOp = Type.Object(
  { op: Type.Literal('switch.heartbeat'), id: MessageIdField, party: SwitchParty, name: SwitchName },
  { ...strict, description: 'Pushes the armed switch\'s deadline to now + its timeout; stream.answer as switch.arm, or stream.error 404 when none is armed (it fired).' },
);

export const SwitchDisarmOp = Type.Object(
  { op: Type.Literal('switch.disarm'), id: MessageIdField, party: SwitchParty, name: SwitchName },
  { ...strict, description: 'Disarms the switch; stream.answer {name, disarmed}.' },
);

/** Every op, by name: the parser checks a message against the schema of its op. */
export const OP_SCHEMAS = {
  subscribe: SubscribeOp,
  unsubscribe: UnsubscribeOp,
  'order.place': PlaceOrderOp,
  'order.cancel': CancelOrderOp,
  'order.batch': BatchOp,
  'order.replace': ReplaceOp,
  'order.status': OrderStatusOp,
  'switch.arm': SwitchArmOp,
  'switch.heartbeat': SwitchHeartbeatOp,
  'switch.disarm': SwitchDisarmOp,
} as const;

// ---- what the gateway answers ----

const AnswerSeq = { ...Seq, description: 'The head when the answer was made (0 before any event)' };
const AnsweredId = Type.Union([MessageIdField, Type.Null()], { description: 'The id of the message answered (null when the message had no readable id)' });
const Op = Type.Union(Object.keys(OP_SCHEMAS).map((o) => Type.Literal(o)));
const AnsweredOp = Type.Union([Op, Type.Null()], { description: 'The op of the message answered (null when it named none that exists)' });

export const AckMessage = Type.Object(
  {
    kind: Type.Literal('stream.ack'),
    seq: AnswerSeq,
    ts: Timestamp,
    id: MessageIdField,
    op: Type.Union([Type.Literal('subscribe'), Type.Literal('unsubscribe')]),
    payload: Type.Object(
      {
        kinds: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: every spec kind' }),
        markets: Type.Union([Type.Array(Market), Type.Null()], { description: 'null: every market' }),
        marketsIgnored: Type.Boolean({ description: 'true when the URL\'s markets were ignored by rule 1 (never for markets named by messages)' }),
        intervals: Type.Union([Type.Array(IntervalLiteral), Type.Null()], { description: 'null: every interval' }),
        parties: Type.Array(Party),
        book: Type.Union([Type.Object({ depth: Type.Integer({ minimum: 1 }), group: Type.String(), throttle: Type.Optional(Type.Union([Type.Literal(100), Type.Literal(500)], { description: 'ms between conflated deltas (absent: every change)' })) }, strict), Type.Null()], {
          description: 'The book view of orderbook.delta; null: the spec\'s polled snapshots',
        }),
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Answer to subscribe / unsubscribe: the connection\'s filters as applied. After a subscribe, the snapshot frames of what was added follow it, then live frames (no gap, no repeat).',
  },
);

export const AnswerMessage = Type.Object(
  {
    kind: Type.Literal('stream.answer'),
    seq: AnswerSeq,
    ts: Timestamp,
    id: MessageIdField,
    op: Type.Union([Type.Literal('order.place'), Type.Literal('order.cancel'), Type.Literal('order.batch'), Type.Literal('order.replace'), Type.Literal('order.status'), Type.Literal('switch.arm'), Type.Literal('switch.heartbeat'), Type.Literal('switch.disarm')]),
    payload: Type.Object(
      {
        status: Type.Integer({ minimum: 200, maximum: 299, description: 'The HTTP status REST would answer' }),
        body: Type.Object({}, {
          additionalProperties: true,
          description:
            'order.place / order.cancel: the engine\'s answer as REST relays it (ok:true or ok:false with its code; `reason` when an order ended at once); order.batch: {results, weight}; order.replace: {cancel, place, replaced}; order.status: {source, order} (the REST answers); switch.*: the switch as armed',
        }),
      },
      strict,
    ),
  },
  { ...strict, description: 'Answer to order.place / order.cancel / order.batch / order.replace: what REST would have answered (status + body).' },
);

export const ErrorMessage = Type.Object(
  {
    kind: Type.Literal('stream.error'),
    seq: AnswerSeq,
    ts: Timestamp,
    id: AnsweredId,
    op: AnsweredOp,
    payload: Type.Object(
      {
        error: Type.String({ description: 'What was wrong, for people' }),
        code: Type.String({
          description:
            'The code REST answers for the same refusal (bad_request, invalid_body, unauthorized, forbidden, not_found, duplicate_client_order_id (409, with `order`), rate_limited, budget_exhausted, payload_too_large, shared_state_unavailable, engine_unavailable, engine_timeout, …), or unknown_market / too_many_subscriptions / too_many_switches / switch_disarmed (409: a disarm came while this switch.arm was in flight, nothing armed)',
        }),
        status: Type.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status REST would answer' }),
      },
      { additionalProperties: true, description: 'Plus the fields REST adds (retryAfterS, serverTime, engineStatus, markets, budget, field, …)' },
    ),
  },
  { ...strict, description: 'A message refused: malformed, unknown op, bad filter, unknown market, bad proof, too large, too many, or an order refused by the gateway or the engine.' },
);
