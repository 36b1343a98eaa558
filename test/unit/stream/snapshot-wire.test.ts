// The snapshot frames of the state are serialised and framed once for every connection opened
// while they are current: a herd of reconnecting clients framed the same bytes once each, and the
// garbage of it (thousands of short-lived buffers) raised the replica's resident memory.
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Frame } from '../../../src/contracts/frame.js';
import { StreamHub } from '../../../src/stream/hub.js';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import { parseSubscription } from '../../../src/stream/subscription.js';

/** A socket whose raw TCP side records every Buffer written to it, as ws's `_socket`. */
function rawSocket(): { ws: WebSocket; written: Buffer[] } {
  const written: Buffer[] = [];
  const raw = { writable: true, writableNeedDrain: false, cork: () => {}, uncork: () => {}, write: (b: Buffer) => written.push(b) > 0, once: () => {}, off: () => {} };
  const ws = { readyState: WebSocket.OPEN, bufferedAmount: 0, _socket: raw, on: () => ws, send: () => {}, ping: () => {}, terminate: () => {}, close: () => {} };
  return { ws: ws as unknown as WebSocket, written };
}

describe('snapshot frames', () => {
  it('are framed once for all the connections they open', async () => {
    const trades: Frame[] = ['BTC-PERP', 'ETH-PERP'].map((market, i) => ({ kind: 'trade', seq: 10 + i, ts: '2026-11-21T10:00:00.000Z', market, payload: { price: '1' } }));
    const state = { epoch: () => 'e1', ready: () => true, whenReady: () => Promise.resolve(), head: () => 11, snapshot: () => ({ frames: trades, later: null }) };
    const hub = new StreamHub({ enabled: true, bufferBytes: 1 << 20, pingMs: 60_000, historySize: 10, metrics: StreamMetrics.for(new Registry()), logger: pino({ level: 'silent' }) as never, state });
    const a = rawSocket();
    const b = rawSocket();
    await hub.add(a.ws, parseSubscription(new URLSearchParams('kinds=trade'), null)).opening;
    await hub.add(b.ws, parseSubscription(new URLSearchParams('kinds=trade'), null)).opening;
    await hub.closeAll();
    expect(a.written).toHaveLength(2);
    expect(JSON.parse(a.written[0]!.subarray(2).toString())).toMatchObject({ kind: 'trade', market: 'BTC-PERP', snapshot: true });
    // The very same bytes, not a copy per connection.
    expect(b.written[0]).toBe(a.written[0]);
    expect(b.written[1]).toBe(a.written[1]);
  });
});
