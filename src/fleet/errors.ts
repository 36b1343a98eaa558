// What the fleet's shared state raises when Redis cannot answer: a domain error, mapped to 503
// `shared_state_unavailable` only at the HTTP edge (src/http/errors.ts `fromDomainError`).

/** A store the replicas share is unavailable; the request fails closed. */
export class SharedStateUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharedStateUnavailableError';
  }
}
