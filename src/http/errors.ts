// The one error shape every non-2xx answer made by the gateway carries:
// {"error": "<human message>", "code": "<machine code>"}. Handlers throw ApiError; the layers
// below raise their own domain errors, and `fromDomainError` is the one place they become
// statuses and wire codes (the error handler, and the stream upgrade on its raw socket).
import { AuthError, type AuthFailure } from '../auth/errors.js';
import { ReplayMemoryFull } from '../auth/replay-guard.js';
import { DatabaseUnavailableError, ReadsExhaustedError, SchemaBehindError } from '../db/errors.js';
import { EngineShareExhaustedError, EngineTimeoutError, EngineUnavailableError } from '../engine/errors.js';
import { ReplayMemoryLostError, SharedStateUnavailableError } from '../fleet/errors.js';
import { InvalidSubscriptionError, type SubscriptionFailure } from '../stream/errors.js';
import { MixedPartiesError } from '../contracts/batch-party.js';

export type ErrorCode =
  | 'bad_request'
  | 'invalid_body'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'budget_exhausted'
  | 'engine_unavailable'
  | 'database_unavailable'
  | 'schema_behind'
  | 'engine_timeout'
  | 'shutting_down'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_connections'
  | 'replay_memory_full'
  | 'shared_state_unavailable'
  | 'unknown_market'
  | 'too_many_subscriptions'
  | 'too_many_switches'
  | 'switch_disarmed'
  | 'duplicate_client_order_id'
  | 'mixed_parties'
  | 'not_yet_indexed'
  | 'internal_error';

export const STATUS_OF: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  rate_limited: 429,
  budget_exhausted: 429,
  engine_unavailable: 502,
  database_unavailable: 503,
  schema_behind: 503,
  engine_timeout: 504,
  shutting_down: 503,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_connections: 503,
  replay_memory_full: 503,
  shared_state_unavailable: 503,
  unknown_market: 400,
  too_many_subscriptions: 400,
  too_many_switches: 400,
  switch_disarmed: 409,
  duplicate_client_order_id: 409,
  mixed_parties: 400,
  not_yet_indexed: 409,
  internal_error: 500,
};

export class ApiError extends Error {
  readonly status: number;
  /** A Retry-After to send as is (the engine's own, relayed); otherwise `extra.retryAfterS` gives it. */
  retryAfter?: string;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra fields merged into the body (e.g. retryAfterS, engineStatus). */
    readonly extra: Record<string, unknown> = {},
    status?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status ?? STATUS_OF[code];
  }

  body(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.extra };
  }
}

const SUBSCRIPTION_CODES: Record<SubscriptionFailure, ErrorCode> = { invalid: 'bad_request', unknown_market: 'unknown_market', too_many: 'too_many_subscriptions' };
const AUTH_CODES: Record<AuthFailure, ErrorCode> = { malformed: 'bad_request', unauthenticated: 'unauthorized', forbidden: 'forbidden' };

/**
 * The HTTP form of an error raised below the edge (every layer's domain errors), or null for
 * anything else. Used by the error handler and by the stream upgrade, which answers on a raw socket.
 */
export function fromDomainError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof AuthError) return new ApiError(AUTH_CODES[err.failure], err.message, err.details);
  if (err instanceof ReplayMemoryFull) {
    return new ApiError('replay_memory_full', 'too many signed requests in the last minute to remember them all; retry shortly', { retryAfterS: 1 });
  }
  if (err instanceof MixedPartiesError) return new ApiError('mixed_parties', err.message, err.details);
  if (err instanceof InvalidSubscriptionError) return new ApiError(SUBSCRIPTION_CODES[err.failure], err.message, err.details);
  if (err instanceof EngineUnavailableError) return new ApiError('engine_unavailable', err.message, err.engineStatus === undefined ? {} : { engineStatus: err.engineStatus });
  if (err instanceof EngineTimeoutError) return new ApiError('engine_timeout', err.message);
  if (err instanceof EngineShareExhaustedError) return new ApiError('budget_exhausted', err.message, { budget: 'engine_calls', retryAfterS: 1 });
  if (err instanceof ReplayMemoryLostError) return new ApiError('shared_state_unavailable', err.message, { retryAfterS: err.retryAfterS });
  if (err instanceof SharedStateUnavailableError) return new ApiError('shared_state_unavailable', err.message);
  if (err instanceof DatabaseUnavailableError) return new ApiError('database_unavailable', err.message);
  if (err instanceof ReadsExhaustedError) return new ApiError('budget_exhausted', err.message, { budget: 'database_reads', retryAfterS: 1 });
  if (err instanceof SchemaBehindError) return new ApiError('schema_behind', err.message, { missingMigrations: err.missingMigrations });
  return null;
}
