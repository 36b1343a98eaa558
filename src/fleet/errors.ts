// What the fleet's shared state raises when Redis cannot answer: a domain error, mapped to 503
// `shared_state_unavailable` only at the HTTP edge (src/http/errors.ts `fromDomainError`).

/** A store the replicas share is unavailable; the request fails closed. */
export class SharedStateUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharedStateUnavailableError';
  }
}

/**
 * The replay memory was lost (docs/adr/0155): a signature timestamped before `refuseBeforeMs` may
 * have been accepted by the lost memory, so it is refused; the client signs again after retryAfterS.
 */
export class ReplayMemoryLostError extends SharedStateUnavailableError {
  readonly retryAfterS: number;
  constructor(
    readonly refuseBeforeMs: number,
    now: number,
  ) {
    super(
      'the signature replay memory (Redis) was lost: signatures timestamped before ' +
        `${new Date(refuseBeforeMs).toISOString()} (the loss plus the signing window) are refused; sign again with a fresh timestamp then`,
    );
    this.name = 'ReplayMemoryLostError';
    this.retryAfterS = Math.max(1, Math.ceil((refuseBeforeMs - now) / 1_000));
  }
}
