// A frame compressed once for every deflate connection (src/stream/deflate-frame.ts, ADR 0367): the
// bytes are a final, compressed (RSV1) text frame whose payload, with the Z_SYNC_FLUSH tail put back,
// inflates to the text with the negotiated window; made once per text and window.
import { describe, expect, it } from 'vitest';
import { constants, inflateRawSync } from 'node:zlib';
import { deflatedFrame, serverWindowBits } from '../../../src/stream/deflate-frame.js';

/** The frame's header length and payload length (server frames are never masked). */
function parse(frame: Buffer): { first: number; payload: Buffer } {
  const len7 = frame[1]! & 0x7f;
  expect(frame[1]! & 0x80).toBe(0);
  if (len7 < 126) return { first: frame[0]!, payload: frame.subarray(2, 2 + len7) };
  if (len7 === 126) return { first: frame[0]!, payload: frame.subarray(4, 4 + frame.readUInt16BE(2)) };
  return { first: frame[0]!, payload: frame.subarray(10, 10 + Number(frame.readBigUInt64BE(2))) };
}

const inflate = (payload: Buffer, windowBits: number) => inflateRawSync(Buffer.concat([payload, Buffer.from([0, 0, 0xff, 0xff])]), { windowBits, finishFlush: constants.Z_SYNC_FLUSH });

describe('deflated frames', () => {
  it('inflate to the text, for short, medium and long texts and each window', () => {
    let random = 7;
    const noise = (n: number) => Array.from({ length: n }, () => ((random = (random * 48271) % 2147483647), String.fromCharCode(32 + (random % 90)))).join('');
    for (const text of ['{"kind":"x"}', JSON.stringify({ kind: 'trade', pad: 'ab'.repeat(200) }), JSON.stringify({ kind: 'orderbook.snapshot', noise: noise(90_000) })]) {
      for (const bits of [9, 10, 15]) {
        const data = Buffer.from(text);
        const frame = deflatedFrame(data, bits);
        const { first, payload } = parse(frame);
        expect(first).toBe(0xc1); // FIN, RSV1, text
        expect(inflate(payload, bits).toString()).toBe(text);
        expect(frame.length).toBe(payload.length + (payload.length < 126 ? 2 : payload.length <= 0xffff ? 4 : 10));
      }
    }
  });

  it('is made once per text and window', () => {
    const data = Buffer.from(JSON.stringify({ kind: 'trade', pad: 'x'.repeat(500) }));
    expect(deflatedFrame(data, 10)).toBe(deflatedFrame(data, 10));
    expect(deflatedFrame(data, 9)).not.toBe(deflatedFrame(data, 10));
    // Another Buffer with the same text is made again, and is the same bytes (no context is kept).
    expect(deflatedFrame(Buffer.from(data), 10)).not.toBe(deflatedFrame(data, 10));
    expect(deflatedFrame(Buffer.from(data), 10).equals(deflatedFrame(data, 10))).toBe(true);
  });

  it('reads the window from the parameters ws accepted', () => {
    const ws = (params?: Record<string, unknown>) => ({ _extensions: params ? { 'permessage-deflate': { params } } : {} });
    expect(serverWindowBits(ws({ server_no_context_takeover: true, server_max_window_bits: 10 }))).toBe(10);
    expect(serverWindowBits(ws({ server_no_context_takeover: true }))).toBe(15);
    // Unreadable: the smallest window Node's raw deflate takes.
    expect(serverWindowBits(ws())).toBe(9);
    expect(serverWindowBits({})).toBe(9);
  });
});
