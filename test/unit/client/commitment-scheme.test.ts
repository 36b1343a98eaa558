// The client's copy of the commitment scheme is the gateway's, byte for byte (see the generator).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateSchemeCopy, SCHEME_COPY } from '../../../packages/client/scripts/commitment-scheme.js';

describe('packages/client/src/generated/commitment-scheme.ts', () => {
  it('is a fresh copy of src/contracts/commitment-scheme.ts (run the generator when this fails)', () => {
    expect(readFileSync(SCHEME_COPY, 'utf8')).toBe(generateSchemeCopy());
  });
});
