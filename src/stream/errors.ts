// What the stream raises for a subscription it cannot serve: a domain error, mapped to 400
// `bad_request` only at the edge (src/http/errors.ts `fromDomainError`).

/** A query parameter of /v1/stream is malformed, repeated, unknown or out of range. */
export class InvalidSubscriptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSubscriptionError';
  }
}
