// What the engine client raises when the engine cannot answer: domain errors, mapped to 502/504
// only at the HTTP edge (src/http/errors.ts `fromDomainError`).

/** The engine is unreachable, or answered something that is not an answer (`engineStatus`: the status it sent). */
export class EngineUnavailableError extends Error {
  constructor(
    message = 'the engine is unreachable',
    readonly engineStatus?: number,
  ) {
    super(message);
    this.name = 'EngineUnavailableError';
  }
}

/** The engine did not answer within its deadline. */
export class EngineTimeoutError extends Error {
  constructor(message = 'the engine did not answer in time') {
    super(message);
    this.name = 'EngineTimeoutError';
  }
}

/**
 * The client address already has its bound of engine calls waiting for its fair share of the
 * pool (ENGINE_ADDRESS_QUEUE, fair-share.ts): refused before anything is sent.
 */
export class EngineShareExhaustedError extends Error {
  constructor(readonly calls: number) {
    super(`this client address has no room for ${calls} more engine call(s) in its share of the engine (ENGINE_ADDRESS_IN_FLIGHT + ENGINE_ADDRESS_QUEUE); retry once its calls are answered`);
    this.name = 'EngineShareExhaustedError';
  }
}
