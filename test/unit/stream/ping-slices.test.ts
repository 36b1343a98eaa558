// The hub's liveness pings are spread over the period (ten slices), each connection pinged once
// per period: at 20 000 connections one burst of pings held the event loop for hundreds of
// milliseconds, and every frame published meanwhile waited.
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { StreamHub } from '../../../src/stream/hub.js';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import { parseSubscription } from '../../../src/stream/subscription.js';

const PING_MS = 1_000;

describe('liveness pings', () => {
  it('go out in slices over the period, each connection once per period', async () => {
    const hub = new StreamHub({ enabled: false, bufferBytes: 1 << 20, pingMs: PING_MS, historySize: 0, metrics: StreamMetrics.for(new Registry()), logger: pino({ level: 'silent' }) as never });
    const pings: number[][] = [];
    const start = performance.now();
    for (let i = 0; i < 100; i++) {
      const at: number[] = [];
      pings.push(at);
      const ws = { readyState: WebSocket.OPEN, bufferedAmount: 0, on: () => ws, ping: () => at.push(performance.now() - start), terminate: () => {}, close: () => {} };
      hub.add(ws as unknown as WebSocket, parseSubscription(new URLSearchParams(''), null));
    }
    await new Promise((r) => setTimeout(r, PING_MS * 1.5));
    await hub.closeAll();
    // Every connection pinged once (none answers: its next turn drops it instead).
    expect(pings.map((p) => p.length)).toEqual(pings.map(() => 1));
    // In ten instants (the pings of one slice go out together; the slices a tenth of a period
    // apart), a tenth of the connections each.
    const times = pings.map(([t]) => t!).sort((a, b) => a - b);
    const groups: number[] = [1];
    for (let i = 1; i < times.length; i++) {
      if (times[i]! - times[i - 1]! > PING_MS / 40) groups.push(1);
      else groups[groups.length - 1]!++;
    }
    expect(groups).toEqual(Array.from({ length: 10 }, () => 10));
  });
});
