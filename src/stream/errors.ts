// What the stream raises for a subscription it cannot serve: a domain error, mapped to a status
// and wire code only at the edge (src/http/errors.ts `fromDomainError`): 400 `bad_request` for a
// malformed filter, `unknown_market` and `too_many_subscriptions` for the subscribe message.

/** invalid: malformed, repeated, unknown or out of range; unknown_market: a market the engine does not list; too_many: past a connection's bound. */
export type SubscriptionFailure = 'invalid' | 'unknown_market' | 'too_many';

/** A query parameter of /v1/stream, or a field of a subscribe message, cannot be served. */
export class InvalidSubscriptionError extends Error {
  constructor(
    message: string,
    readonly failure: SubscriptionFailure = 'invalid',
    /** Facts the client can act on (the unknown markets). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'InvalidSubscriptionError';
  }
}
