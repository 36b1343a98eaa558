// Shared TypeBox schemas: one definition gives validation, TypeScript types and the OpenAPI text.
import { Type, type TSchema } from 'typebox';

// The wire's scalar types are the stream's too, so they live below both (src/contracts/wire.ts).
import { Decimal, DECIMAL_PATTERN, Market, MARKET_PATTERN, MAX_SEQ, NullableDecimal, NullableSeq, NullableTimestamp, Party, PARTY_PATTERN, Seq, Timestamp } from '../contracts/wire.js';

export { Decimal, DECIMAL_PATTERN, Market, MARKET_PATTERN, MAX_SEQ, NullableDecimal, NullableSeq, NullableTimestamp, Party, PARTY_PATTERN, Seq, Timestamp };

export const Limit = Type.Integer({
  minimum: 1,
  maximum: 1000,
  default: 100,
  description: 'Page size: integer from 1 to 1000, default 100. Anything else is a 400.',
});
export const Before = Type.Integer({
  minimum: 0,
  maximum: MAX_SEQ,
  description: 'Cursor: only rows with a seq strictly below this one (take it from `nextCursor`).',
});
export const Since = Type.Integer({
  minimum: 0,
  maximum: MAX_SEQ,
  description: 'Cursor: only rows with a seq strictly above this one (take it from `nextCursor`).',
});

export const PartyParams = Type.Object({ party: Party });

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Human-readable message' }),
    code: Type.String({ description: 'Machine-readable code, e.g. bad_request, database_unavailable' }),
  },
  { additionalProperties: true, $id: 'Error', description: 'Every non-2xx answer made by the gateway' },
);

/**
 * A nullable integer cursor written the OpenAPI 3.0 way (`type: integer, nullable: true`): a
 * union with null renders as `{"type":"object","nullable":true,"enum":[null]}`, which validating
 * proxies such as Prism take as an unknown schema and then skip validating the whole body.
 */
export function NullableCursor(description: string, maximum = MAX_SEQ) {
  return Type.Unsafe<number | null>({ type: 'integer', nullable: true, minimum: 0, maximum, description });
}

/** `{"items": [...], "nextCursor": seq | null}`. */
export function List<T extends TSchema>(item: T, cursorNote = 'pass back as `before`') {
  return Type.Object({
    items: Type.Array(item),
    nextCursor: NullableCursor(`null on the last page; otherwise ${cursorNote}`),
  });
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request (code `bad_request`): the message names the parameter and what was wrong; on the trading routes, `invalid_body` (with `field`) for a body that is not the engine request\'s shape (docs/trading.md); on a batch or cancel-replace, `mixed_parties` (with `item`, `field`) when an item names a signer of its own (one party per batch)',
  401: 'Unauthorized (code `unauthorized`); a signature timestamp outside the ±30 s window adds `serverTime` (ms)',
  403: 'Forbidden (code `forbidden`)',
  404: 'Not found (code `not_found`)',
  409: 'Not yet indexed (code `not_yet_indexed`, with `head`: the newest seq the mirror holds): the seq asked for is beyond the mirror; retry once it has caught up',
  413: 'Payload too large (code `payload_too_large`): the body is over 1 MiB',
  415: 'Unsupported media type (code `unsupported_media_type`): a body needs Content-Type application/json and must be JSON',
  429: 'Rate limited (code `rate_limited`, with Retry-After and `retryAfterS`); `budget_exhausted` (with `budget`) when a party proof needs a session lookup past SESSION_LOOKUPS_PER_IP (docs/security.md)',
  502: 'Engine unavailable (code `engine_unavailable`)',
  503: 'Database unavailable or indexer schema behind (codes `database_unavailable`, `schema_behind`); `replay_memory_full` on a signed route when the replay memory is full; `shared_state_unavailable` on a signed route when the fleet\'s Redis cannot remember the signature, or (with Retry-After) for one signing window after its replay memory was found lost (docs/fleet.md)',
  504: 'Engine timeout (code `engine_timeout`)',
};

/** Response schemas for the given error statuses, all `{error, code}`. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = { ...Type.Ref('Error'), description: ERROR_DESCRIPTIONS[s] ?? 'Error' } as TSchema;
  return out;
}

/** The error statuses every database read can answer. */
export const READ_ERRORS = [400, 503] as const;
