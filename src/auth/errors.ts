// Why the auth layer refuses a signed request or a party: domain errors, mapped to statuses and
// wire codes only at the HTTP edge (src/http/errors.ts `fromDomainError`).

/** malformed: the signing headers themselves are wrong (400); unauthenticated: no valid proof (401); forbidden: proven, but not that party (403). */
export type AuthFailure = 'malformed' | 'unauthenticated' | 'forbidden';

export class AuthError extends Error {
  constructor(
    readonly failure: AuthFailure,
    message: string,
    /** Facts the client can act on (e.g. serverTime of a proof outside the time window). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AuthError';
  }
}
