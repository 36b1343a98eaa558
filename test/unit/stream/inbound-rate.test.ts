// The message rate bound credits the time this process's loop was held (ADR 0381): a client that
// sent at its rate while the loop could not read is not closed when its messages are read at once,
// and a client past its rate is closed as before. On virtual time: `hold` is a loop held by work.
import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/stream/inbound-limit.js';
import { LoopStalls, MAX_CREDIT_MS, STALL_PERIOD_MS } from '../../../src/stream/loop-stalls.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const RATE = 20;
const BURST = 40;

/** Takes `n` messages at once; how many passed. */
function takeAll(bucket: TokenBucket, stalls: LoopStalls, n: number): number {
  let passed = 0;
  for (let i = 0; i < n; i++) if (bucket.take(stalls)) passed++;
  return passed;
}

async function started(): Promise<{ clock: VirtualClock; stalls: LoopStalls }> {
  const clock = new VirtualClock();
  const stalls = new LoopStalls(clock);
  stalls.start();
  await clock.advance(1_000);
  return { clock, stalls };
}

describe('the message rate bound across a held loop', () => {
  it('reads at once, without a close, what a client sent at 18/s during a 3 s stall', async () => {
    const { clock, stalls } = await started();
    const bucket = new TokenBucket(RATE, BURST);
    // Steady at 18 a second for a second: the bucket stays near full.
    for (let i = 0; i < 18; i++) {
      expect(bucket.take(stalls)).toBe(true);
      await clock.advance(1000 / 18);
    }
    // The loop is held 3 s: the 54 messages sent meanwhile are read in one turn. Without the credit
    // the cap (40) would close this client.
    clock.hold(3_000);
    expect(takeAll(bucket, stalls, 54)).toBe(54);
    // And the meter's tick, late, records the stall: a read after it still sees it.
    await clock.advance(0);
    expect(stalls.heldSince(clock.now() - 3_100, clock.now())).toBeGreaterThanOrEqual(2_900);
  });

  it('the same burst, with the loop not held (the client was idle, then sent 54 at once), is a flood', async () => {
    const { clock, stalls } = await started();
    const bucket = new TokenBucket(RATE, BURST);
    await clock.advance(3_000);
    expect(takeAll(bucket, stalls, 54)).toBe(BURST);
  });

  it('a client past its rate through a stall is still refused past rate × elapsed + burst', async () => {
    const { clock, stalls } = await started();
    const bucket = new TokenBucket(RATE, BURST);
    expect(takeAll(bucket, stalls, BURST)).toBe(BURST);
    clock.hold(2_000);
    // 2 s at 20/s refill 40; the credit raises the cap, not the refill.
    expect(takeAll(bucket, stalls, 100)).toBe(40);
  });

  it('credits no jitter, nothing past the time since the last read, and no more than its bound', async () => {
    const { clock, stalls } = await started();
    // A turn held less than the period is no stall.
    clock.hold(STALL_PERIOD_MS - 1);
    await clock.advance(0);
    expect(stalls.heldSince(clock.now() - 5_000, clock.now())).toBe(0);
    // A stall credits at most the time since `at`.
    clock.hold(2_000);
    expect(stalls.heldSince(clock.now() - 500, clock.now())).toBe(500);
    await clock.advance(0);
    // Bounded: a minute held is credited MAX_CREDIT_MS.
    clock.hold(60_000);
    expect(stalls.heldSince(clock.now() - 120_000, clock.now())).toBe(MAX_CREDIT_MS);
    // A stopped meter credits nothing.
    stalls.stop();
    clock.hold(2_000);
    expect(stalls.heldSince(clock.now() - 5_000, clock.now())).toBe(0);
  });

  it('forgets a stall that ended before the last read', async () => {
    const { clock, stalls } = await started();
    clock.hold(2_000);
    await clock.advance(STALL_PERIOD_MS);
    const read = clock.now();
    await clock.advance(1_000);
    expect(stalls.heldSince(read, clock.now())).toBe(0);
  });
});
