// The seam of claims that every replica must agree on (a client order id taken by a party): `SET
// NX`-like, first one wins. A claim may carry a note (what became of the claimed thing, once known),
// which every replica reads with its time left. In process memory for a single gateway, Redis for a
// fleet (src/fleet/claims.ts).

/** A claim as held: its note ('' when none was written) and the ms it has left. */
export interface HeldClaim {
  note: string;
  ttlMs: number;
}

export interface Claims {
  /** true when `key` was free and is now held for `ttlMs`; false when someone holds it. Throws when the store cannot answer. */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Frees `key` (whoever held it). */
  release(key: string): Promise<void>;
  /** The claim on `key`, null when free. Throws when the store cannot answer. */
  read(key: string): Promise<HeldClaim | null>;
  /** Writes `note` on a held claim and gives it `ttlMs` from now; false (nothing written) when `key` is free. */
  note(key: string, note: string, ttlMs: number): Promise<boolean>;
}
