// Wire shapes of the desk calls (shared by the REST routes and the stream's messages) (docs/trading.md "Batches" and "Cancel-replace"): one envelope
// carrying several signed calls, each item signed exactly as it would be alone. Unlike the single
// routes' bodies (documentation only: the engine owns the trading grammar), the envelope is the
// gateway's own grammar and is validated here; each item's order body is still the engine's.
import { Type, type Static } from 'typebox';

/** Most items one batch may carry. */
export const MAX_BATCH_ITEMS = 50;

const strict = { additionalProperties: false } as const;
/** A signing header's value: printable ASCII (what an HTTP header could carry). */
const HeaderValue = (description: string) => Type.String({ minLength: 1, maxLength: 1024, pattern: '^[\\x20-\\x7E]+$', description });
const User = HeaderValue('X-User of every item: the party id');
const SessionId = HeaderValue('X-Session-Id of every item');
const Sig = (what: string) => HeaderValue(`X-Session-Sig of this item: <tsMs>.<128 hex>, the session key's signature over ${what}`);
const OrderId = Type.String({ minLength: 1, maxLength: 64, description: 'The order to cancel' });
const SignedBody = Type.String({ minLength: 1, maxLength: 65_536, description: 'The order JSON exactly as signed (the body POST /v1/orders would carry)' });

export const PlaceItem = Type.Object(
  { op: Type.Literal('place'), body: SignedBody, sig: Sig('"POST\\n/v1/orders\\n<tsMs>\\n<body>"') },
  { ...strict, description: 'A signed POST /v1/orders' },
);
export const CancelItem = Type.Object(
  { op: Type.Literal('cancel'), orderId: OrderId, sig: Sig('"DELETE\\n/v1/orders/<encodeURIComponent(orderId)>\\n<tsMs>\\n"') },
  { ...strict, description: 'A signed DELETE /v1/orders/:orderId' },
);
export const BatchItem = Type.Union([PlaceItem, CancelItem]);

export const BatchFields = {
  user: User,
  sessionId: SessionId,
  mode: Type.Optional(
    Type.Union([Type.Literal('concurrent'), Type.Literal('ordered')], {
      description: 'concurrent (default): every item is sent to the engine at once; ordered: one after the other, in the listed order',
    }),
  ),
  stopOnFailure: Type.Optional(
    Type.Boolean({ description: 'With mode ordered: after the first item that fails (a refusal, or ok:false), the rest are not sent (outcome skipped)' }),
  ),
  items: Type.Array(BatchItem, { minItems: 1, maxItems: MAX_BATCH_ITEMS, description: `1..${MAX_BATCH_ITEMS} signed place / cancel calls` }),
};
export const BatchBody = Type.Object(BatchFields, { ...strict, description: 'Signed calls of one party and session, each signed exactly as alone' });
export type BatchBody = Static<typeof BatchBody>;
export type BatchItem = Static<typeof BatchItem>;

export const ItemOutcome = Type.Object(
  {
    op: Type.Union([Type.Literal('place'), Type.Literal('cancel')]),
    outcome: Type.Union([Type.Literal('answered'), Type.Literal('refused'), Type.Literal('skipped')], {
      description:
        'answered: the engine answered 2xx (body is its answer: check `ok`); refused: the gateway or the engine refused the call (body is the error REST would answer); skipped: not sent (stopOnFailure; in a cancel-replace, the place when the cancel failed, or the cancel when the gateway refused the place)',
    }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the call alone would have answered; null when skipped' }),
    body: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The answer the call alone would have had; null when skipped' }),
  },
  { ...strict, description: 'What became of one item' },
);
export type ItemOutcome = Static<typeof ItemOutcome>;

export const BatchAnswer = Type.Object(
  {
    results: Type.Array(ItemOutcome, { description: 'One per item, in the order of the request' }),
    weight: Type.Integer({ minimum: 1, description: 'What the batch cost of the rate-limit budgets (docs/trading.md "Batch weights")' }),
  },
  strict,
);

export const ReplaceFields = {
  user: User,
  sessionId: SessionId,
  cancel: Type.Object({ orderId: OrderId, sig: Sig('"DELETE\\n/v1/orders/<encodeURIComponent(orderId)>\\n<tsMs>\\n"') }, { ...strict, description: 'The signed cancel of the resting order' }),
  place: Type.Object({ body: SignedBody, sig: Sig('"POST\\n/v1/orders\\n<tsMs>\\n<body>"') }, { ...strict, description: 'The signed order that replaces it' }),
};
export const ReplaceBody = Type.Object(ReplaceFields, { ...strict, description: 'A signed cancel and a signed place; the place is sent only once the engine confirmed the cancel' });
export type ReplaceBody = Static<typeof ReplaceBody>;

export const ReplaceAnswer = Type.Object(
  {
    cancel: ItemOutcome,
    place: ItemOutcome,
    replaced: Type.Boolean({ description: 'true when the cancel was confirmed and the new order accepted (ok:true)' }),
  },
  strict,
);
