// Shared check of every engine suite: each event the suite produced was built with its keys in
// sorted order, so the JSON the stream sends is already the canonical form commitments hash.
import { expect } from 'vitest';
import { canonicalJson, canonicalJsonSlow, isCanonicalShape } from '../../../sandbox/engine/commitments.js';

export function expectCanonicalEvents(events: ReadonlyArray<{ kind: string }>): void {
  expect(events.length).toBeGreaterThan(10);
  for (const e of events) {
    expect(isCanonicalShape(e), e.kind).toBe(true);
    expect(canonicalJson(e)).toBe(canonicalJsonSlow(e));
  }
}
