// A frame's bytes are held once: the WebSocket frame, with the JSON text as a view into it. The
// frame must be what ws itself would write for that text, at each of the three length encodings.
import { describe, expect, it } from 'vitest';
import { framedText } from '../../../src/stream/framed-text.js';
import { wireFrame } from '../../../src/stream/client.js';

describe('framedText', () => {
  // 125/126 and 65535/65536 are where RFC 6455 switches from a 7-bit length to 16 and 64 bits.
  for (const length of [0, 1, 125, 126, 1000, 65_535, 65_536, 200_000]) {
    it(`frames ${length} bytes as ws does`, () => {
      const text = 'x'.repeat(length);
      const { data, wire } = framedText(text);
      expect(data.toString('utf8')).toBe(text);
      expect(wire.equals(wireFrame(Buffer.from(text)))).toBe(true);
    });
  }

  it('counts bytes, not characters, for non-ASCII text', () => {
    const text = JSON.stringify({ market: 'ÉTH-€', note: '価格' }).repeat(9); // 126+ bytes, fewer characters
    const { data, wire } = framedText(text);
    expect(data.toString('utf8')).toBe(text);
    expect(wire.equals(wireFrame(Buffer.from(text)))).toBe(true);
  });

  it('keeps the text as a view into the frame, not a second copy', () => {
    const { data, wire } = framedText('{"kind":"trade","seq":1}');
    expect(data.buffer).toBe(wire.buffer);
    expect(data.byteOffset).toBe(wire.byteOffset + 2);
    expect(data.length + 2).toBe(wire.length);
  });
});
