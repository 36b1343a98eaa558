// TypeBox schemas of the conversation on an open /v1/stream connection (docs/stream.md "Talking to
// the socket"): the fields every client message is made of (its id, signing values, filter lists),
// which each call's declaration (src/http/calls/) puts together into its message's schema, and what
// the gateway answers (stream.ack, stream.answer, stream.error), checked in tests. Both feed the
// AsyncAPI document.
import { Type, type TSchema } from 'typebox';
import { CANDLE_INTERVALS, FRAME_KINDS } from '../contracts/frame.js';
import { Market, Party, Seq, Timestamp } from '../contracts/wire.js';

const strict = { additionalProperties: false } as const;
export const MAX_LIST = 100;

export const MessageIdField = Type.Union(
  [Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x20-\\x7E]{1,64}$' }), Type.Integer({ minimum: -9007199254740991, maximum: 9007199254740991 })],
  { description: 'The client\'s id of the message (1..64 printable ASCII characters, or an integer), echoed in its answer' },
);
export const Kind = Type.Union(FRAME_KINDS.map((k) => Type.Literal(k)));
export const IntervalLiteral = Type.Union(CANDLE_INTERVALS.map((i) => Type.Literal(i)));
export const list = (item: TSchema, description: string) => Type.Optional(Type.Array(item, { maxItems: MAX_LIST, description }));
/**
 * The value of a signing header: printable ASCII, as every party id, session id and signature is.
 * A control character (CR, LF, NUL) or a character past Latin-1 is no HTTP header value: refused
 * here (400), it would otherwise fail only when the call is forwarded, as the engine's 502.
 */
export const SIGNING_VALUE_PATTERN = '^[\\x20-\\x7E]*$';
export const signingValue = (description: string) => Type.Optional(Type.String({ maxLength: 1024, pattern: SIGNING_VALUE_PATTERN, description }));
export const ProofUser = signingValue('X-User: the party id');
export const ProofSession = signingValue('X-Session-Id: the session id');
export const ProofSig = (what: string) => signingValue(`X-Session-Sig: <tsMs>.<128 hex>, the session key's signature over ${what}`);

// ---- what the gateway answers ----

const AnswerSeq = { ...Seq, description: 'The head when the answer was made (0 before any event)' };
const AnsweredId = Type.Union([MessageIdField, Type.Null()], { description: 'The id of the message answered (null when the message had no readable id)' });
/** An op of sendStream (the calls' declarations list them; this schema does not repeat the list). */
const Op = Type.String({ pattern: '^[a-z]+(\\.[a-z]+)?$', description: 'The op of the message answered (one of sendStream\'s)' });
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
    op: Op,
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
