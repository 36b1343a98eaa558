// A desk call (a batch, a cancel-replace) acts for one party: the envelope's `user` and `sessionId`
// are every item's X-User and X-Session-Id, and the rate-limit budgets are charged once, for the
// party the items' signatures prove (docs/adr/0170-a-batch-is-one-partys.md). An item cannot name a
// signer of its own, so a batch that tries (an item carrying `user`, `sessionId` or `party`, as a
// client mixing several parties' orders in one call would write it) is refused as a whole, with a
// code of its own, before the general shape check would only call the field unknown.

/** The fields by which an item would name its own signer. */
const SIGNER_FIELDS = ['user', 'sessionId', 'party'] as const;

/** A desk call whose items name signers of their own: refused, nothing sent (400 `mixed_parties`). */
export class MixedPartiesError extends Error {
  constructor(
    message: string,
    /** Where: the item's index (batch) or part (replace), and the field. */
    readonly details: { item: number | string; field: string },
  ) {
    super(message);
    this.name = 'MixedPartiesError';
  }
}

function namedSigner(item: unknown): string | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
  for (const field of SIGNER_FIELDS) if (Object.hasOwn(item, field)) return field;
  return null;
}

/**
 * Throws MixedPartiesError when an item of a batch body (`items`) or a part of a replace body
 * (`cancel`, `place`) names a signer. Anything else about the body is left to its schema.
 */
export function assertOneParty(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const b = body as { items?: unknown; cancel?: unknown; place?: unknown };
  const parts: Array<[number | string, unknown]> = Array.isArray(b.items) ? b.items.map((item, i): [number, unknown] => [i, item]) : [];
  parts.push(['cancel', b.cancel], ['place', b.place]);
  for (const [where, item] of parts) {
    const field = namedSigner(item);
    if (field === null) continue;
    throw new MixedPartiesError(
      `one party per call: the envelope's "user" and "sessionId" are every item's signer, so ${typeof where === 'number' ? `item ${where}` : `"${where}"`} cannot carry "${field}"; send one batch per party`,
      { item: where, field },
    );
  }
}
