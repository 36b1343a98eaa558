// Parts deflated apart, served as one gzip body (ADR 0383): zlib's strict gunzip reads the body as
// the parts' concatenation, whatever the parts; Accept-Encoding read as RFC 9110 says.
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, deflatePart, gzipOf } from '../../../../src/http/reads/gzip-parts.js';

describe('gzip of parts deflated once', () => {
  it('decodes to the parts one after the other (CRC-32 and length checked by gunzip)', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 5_000 }), { maxLength: 12 }), (arrays) => {
        const parts = arrays.map((a) => deflatePart(Buffer.from(a)));
        const body = Buffer.concat(gzipOf(parts));
        expect(gunzipSync(body).equals(Buffer.concat(arrays.map((a) => Buffer.from(a))))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('compresses JSON of repeated shape (a page of proofs) many times over', () => {
    const plain = Buffer.from(JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ seq: i, kind: 'engine.order_filled', market: 'BTC-PERP', party: `p::${'7'.repeat(64)}` }))));
    const [part] = [deflatePart(plain)];
    expect(part!.deflated.length * 5).toBeLessThan(plain.length);
  });

  it('takes gzip when named or by *, not with q=0, not when absent', () => {
    expect(acceptsGzip('gzip, deflate, br, zstd')).toBe(true);
    expect(acceptsGzip('br;q=1, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip(['identity', 'x-gzip'])).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip; q=0.000')).toBe(false);
    expect(acceptsGzip('br, deflate')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});
