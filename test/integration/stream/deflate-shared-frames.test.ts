// Deflate connections are written frames compressed once for all of them (ADR 0367): over real
// sockets, deflate clients with different offers (none for the window, server_max_window_bits=12:
// the gateway answers 10 to both, and refuses an offer under 10) receive exactly the frames a plain
// client does, and what they read is compressed (fewer bytes on the wire).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { A, B, simpleMatch } from '../../unit/projections/fixtures.js';
import { startStack, ts, wsUrl, type Stack } from './helpers.js';
import { eventually } from '../../support/eventually.js';

function open(url: string, deflate: false | { serverMaxWindowBits?: number }): Promise<{ ws: WebSocket; texts: string[] }> {
  const ws = new WebSocket(url, { perMessageDeflate: deflate === false ? false : { ...deflate } });
  const texts: string[] = [];
  ws.on('message', (d) => texts.push(d.toString()));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, texts }));
    ws.once('error', reject);
  });
}

describe('deflate frames compressed once', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ WS_DEFLATE_THRESHOLD_BYTES: '128' });
    await s.engine.waitFor(() => s.engine.open === 1);
  });
  afterAll(async () => s.close());

  it('every deflate client reads the frames a plain client reads, compressed, whatever its offer', async () => {
    const q = `snapshot=false&party=${A},${B}`;
    const plain = await open(wsUrl(s.gw.url, q), false);
    const wide = await open(wsUrl(s.gw.url, `${q}&compress=deflate`), {});
    const narrow = await open(wsUrl(s.gw.url, `${q}&compress=deflate`), { serverMaxWindowBits: 12 });
    // What the gateway answered (the client's side of the parameters): a window of 10 to both.
    const window = (c: { ws: WebSocket }) => (c.ws as unknown as { _extensions: Record<string, { params: { server_max_window_bits?: number } }> })._extensions['permessage-deflate']!.params.server_max_window_bits;
    expect(window(wide)).toBe(10);
    expect(window(narrow)).toBe(10);
    const bytes = (c: { ws: WebSocket }) => (c.ws as unknown as { _socket: { bytesRead: number } })._socket.bytesRead;
    const before = [plain, wide, narrow].map(bytes);
    const events = Array.from({ length: 20 }, (_, i) => simpleMatch(i + 1, ts(i + 1), String(100 + i), '1'));
    s.engine.push(...events);
    await eventually(() => plain.texts.some((t) => t.includes('"seq":20')), 'the last frame on the plain client');
    await eventually(() => wide.texts.length === plain.texts.length && narrow.texts.length === plain.texts.length, 'as many frames on the deflate clients');
    expect(plain.texts.length).toBeGreaterThan(20);
    expect(wide.texts).toEqual(plain.texts);
    expect(narrow.texts).toEqual(plain.texts);
    const read = [plain, wide, narrow].map((c, i) => bytes(c) - before[i]!);
    expect(read[1]).toBeLessThan(read[0]! * 0.7);
    expect(read[2]).toBeLessThan(read[0]! * 0.7);
    for (const c of [plain, wide, narrow]) c.ws.close();
  });
});
