// The hub's liveness pings are spread over the period (ten slices), each connection pinged once
// per period: at 20 000 connections one burst of pings held the event loop for hundreds of
// milliseconds, and every frame published meanwhile waited. On virtual time: the instants are the
// hub's own, not the machine's.
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { StreamHub } from '../../../src/stream/hub.js';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import { parseSubscription } from '../../../src/stream/subscription.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const PING_MS = 1_000;

/** A socket that records when it was pinged and whether it was terminated. */
function fakeSocket(clock: VirtualClock, start: number) {
  const pings: number[] = [];
  const state = { terminated: false };
  const ws = {
    readyState: WebSocket.OPEN,
    bufferedAmount: 0,
    on: () => ws,
    ping: () => pings.push(clock.now() - start),
    terminate: () => void (state.terminated = true),
    close: () => {},
  };
  return { ws: ws as unknown as WebSocket, pings, state };
}

describe('liveness pings', () => {
  it('go out in slices over the period, each connection once per period; one that never answers is dropped the next period', async () => {
    const clock = new VirtualClock();
    const hub = new StreamHub({ enabled: false, bufferBytes: 1 << 20, pingMs: PING_MS, historySize: 0, metrics: StreamMetrics.for(new Registry()), logger: pino({ level: 'silent' }) as never, clock });
    const start = clock.now();
    const sockets = Array.from({ length: 100 }, () => fakeSocket(clock, start));
    for (const s of sockets) hub.add(s.ws, parseSubscription(new URLSearchParams(''), null));
    await clock.advance(PING_MS);
    // Every connection pinged once (none answers).
    expect(sockets.map((s) => s.pings.length)).toEqual(sockets.map(() => 1));
    // In ten instants a tenth of a period apart, a tenth of the connections each.
    const counts = new Map<number, number>();
    for (const s of sockets) counts.set(s.pings[0]!, (counts.get(s.pings[0]!) ?? 0) + 1);
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => (i + 1) * (PING_MS / 10)));
    expect([...counts.values()]).toEqual(Array.from({ length: 10 }, () => 10));
    expect(sockets.some((s) => s.state.terminated)).toBe(false);
    // A period later, their slice comes again: no pong came, so each is dropped, not pinged again.
    await clock.advance(PING_MS);
    expect(sockets.every((s) => s.state.terminated && s.pings.length === 1)).toBe(true);
    await hub.closeAll();
    expect(clock.timers).toBe(0);
  });
});
