// The seam of claims that every replica must agree on (a client order id taken by a party, a dead
// man's switch armed): `SET NX`-like, first one wins. In process memory for a single gateway,
// Redis for a fleet (src/fleet/claims.ts).

export interface Claims {
  /** true when `key` was free and is now held for `ttlMs`; false when someone holds it. Throws when the store cannot answer. */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Frees `key` (whoever held it). */
  release(key: string): Promise<void>;
}
