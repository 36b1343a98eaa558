// The live path's remaining waits run on the injected clock (ADR 0330), so their bounds are the
// code's, checked here on virtual time: the place-order answer's wait for a cancel reason, and a
// closed connection's socket destroyed when the peer never answers the close frame.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Frame } from '../../../src/contracts/frame.js';
import { OrderOutcomes } from '../../../src/stream/order-outcomes.js';
import { StreamClient } from '../../../src/stream/client.js';
import { parseSubscription } from '../../../src/stream/subscription.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const cancelled = (orderId: string, reason: string): Frame => ({ kind: 'order.update', seq: 1, ts: new Date(0).toISOString(), payload: { orderId, status: 'cancelled', reason } });

describe('the cancel reason a place-order answer waits for', () => {
  it('is answered when its event comes within the wait, null at the wait\'s end, and leaves no timer', async () => {
    const clock = new VirtualClock();
    const outcomes = new OrderOutcomes(clock);
    const late = outcomes.reason('o-1', 200);
    const never = outcomes.reason('o-2', 200);
    await clock.advance(150);
    outcomes.observe(cancelled('o-1', 'ioc'));
    expect(await late).toBe('ioc');
    let settled: string | null | undefined;
    void never.then((r) => (settled = r));
    await clock.advance(49);
    expect(settled).toBeUndefined();
    await clock.advance(1);
    expect(settled).toBeNull();
    expect(clock.timers).toBe(0);
    // Known already: at once.
    expect(await outcomes.reason('o-1', 200)).toBe('ioc');
  });
});

describe('a connection the gateway closes', () => {
  it('has its socket destroyed 5 s after the close frame when the peer never answers it', async () => {
    const clock = new VirtualClock();
    const calls: string[] = [];
    const ws = { readyState: WebSocket.OPEN, bufferedAmount: 0, extensions: '', on: () => ws, close: (code: number) => calls.push(`close ${code}`), terminate: () => calls.push('terminate'), send: () => {} };
    const client = new StreamClient(ws as unknown as WebSocket, parseSubscription(new URLSearchParams(''), null), 1 << 20, clock);
    client.closeSlow();
    expect(calls).toEqual(['close 4008']);
    await clock.advance(4_999);
    expect(calls).toEqual(['close 4008']);
    await clock.advance(1);
    expect(calls).toEqual(['close 4008', 'terminate']);
    // A second close of a closing connection sends nothing more.
    client.close(1001, 'going away');
    expect(calls).toEqual(['close 4008', 'terminate']);
    expect(clock.timers).toBe(0);
  });
});
