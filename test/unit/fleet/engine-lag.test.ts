// The lag of a replica measured against the engine's head (src/fleet/engine-lag.ts): it grows
// during a stall (never frozen at the last value), is 0 when the replica holds the newest head, and
// keeps growing when no head can be observed at all.
import { describe, expect, it } from 'vitest';
import { EngineLag, HEAD_FRESH_MS } from '../../../src/fleet/engine-lag.js';
import { VirtualClock } from '../../support/virtual-clock.js';

describe('EngineLag', () => {
  it('is 0 while the replica holds the newest observed head', () => {
    let pos = 10;
    const lag = new EngineLag(() => pos, new VirtualClock(0));
    lag.observe(10, 1_000);
    expect(lag.snapshot(1_500)).toEqual({ engineHead: 10, events: 0, seconds: 0 });
    lag.observe(12, 2_000);
    pos = 12;
    expect(lag.snapshot(2_100)).toEqual({ engineHead: 12, events: 0, seconds: 0 });
  });

  it('grows by one per second during a stall while the engine moves on', () => {
    const pos = 100;
    const lag = new EngineLag(() => pos, new VirtualClock(0));
    lag.observe(100, 1_000); // in sync at t=1 s
    for (let t = 2_000; t <= 30_000; t += 1_000) lag.observe(100 + t / 100, t);
    const s = lag.snapshot(30_000);
    expect(s.events).toBe(300);
    expect(s.seconds).toBeCloseTo(29, 5);
    // Asked again later without a new observation, it has still grown.
    expect(lag.snapshot(35_000).seconds).toBeCloseTo(34, 5);
  });

  it('counts from the newest head reached, not from the last event received', () => {
    let pos = 0;
    const lag = new EngineLag(() => pos, new VirtualClock(0));
    lag.observe(50, 1_000);
    lag.observe(80, 2_000);
    lag.observe(120, 3_000);
    pos = 80; // caught up with what the engine had at t=2 s
    expect(lag.snapshot(3_500)).toEqual({ engineHead: 120, events: 40, seconds: 1.5 });
  });

  it('keeps growing when no head can be observed (engine and NATS out of reach)', () => {
    const lag = new EngineLag(() => 7, new VirtualClock(0));
    lag.observe(7, 1_000);
    expect(lag.snapshot(1_000 + HEAD_FRESH_MS).seconds).toBe(0);
    expect(lag.snapshot(1_000 + HEAD_FRESH_MS + 4_000).seconds).toBeCloseTo((HEAD_FRESH_MS + 4_000) / 1000, 5);
  });

  it('a replica that received nothing yet counts as at seq 0 (an empty history is current)', () => {
    const lag = new EngineLag(() => null, new VirtualClock(0));
    lag.observe(0, 500);
    expect(lag.snapshot(600)).toEqual({ engineHead: 0, events: 0, seconds: 0 });
  });

  it('a replaced history forgets the old head', () => {
    let pos = 500;
    const lag = new EngineLag(() => pos, new VirtualClock(0));
    lag.observe(500, 1_000);
    lag.reset(2_000);
    pos = 3;
    lag.observe(3, 2_100);
    expect(lag.snapshot(2_200)).toEqual({ engineHead: 3, events: 0, seconds: 0 });
  });
});
