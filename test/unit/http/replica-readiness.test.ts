// The replica probe's verdict (src/http/replica-readiness.ts): this replica's own state only.
import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_STALL_MS, EventLoopWatch, judgeReplica } from '../../../src/http/replica-readiness.js';
import { eventually } from '../../support/eventually.js';

const live = { enabled: true, connected: true, maxSeq: 10, caughtUp: true };
const base = { live, tokenSet: true, production: true, eventLoopDelayMs: 5 };

describe('judgeReplica', () => {
  it('ready when started and caught up, whatever the source connection says (a shared dependency)', () => {
    expect(judgeReplica(base)).toEqual({
      status: 'ready',
      reasons: [],
      checks: { started: true, caughtUp: true, stalled: false, streamConfigured: true, eventLoopDelayMs: 5 },
    });
    expect(judgeReplica({ ...base, live: { ...live, connected: false } }).status).toBe('ready');
  });

  it('not ready while starting, while catching up, while stalled, with a held event loop', () => {
    expect(judgeReplica({ ...base, live: { ...live, enabled: false, caughtUp: false } }).reasons).toEqual(['starting']);
    expect(judgeReplica({ ...base, live: { ...live, caughtUp: false } }).reasons).toEqual(['catching up with the engine event stream']);
    expect(judgeReplica({ ...base, live: { ...live, stalled: '40 s behind the engine head' } }).reasons).toEqual(['stalled: 40 s behind the engine head']);
    expect(judgeReplica({ ...base, eventLoopDelayMs: EVENT_LOOP_STALL_MS + 1 }).reasons).toEqual([`event loop held ${EVENT_LOOP_STALL_MS + 1} ms (over ${EVENT_LOOP_STALL_MS} ms)`]);
  });

  it('without ENGINE_ADMIN_TOKEN: not ready in production, ready elsewhere (the spec lets it run)', () => {
    const off = { ...base, live: { enabled: false, connected: false, maxSeq: null }, tokenSet: false };
    expect(judgeReplica(off)).toMatchObject({ status: 'not_ready', reasons: ['ENGINE_ADMIN_TOKEN is not set: the stream is disabled'] });
    expect(judgeReplica({ ...off, production: false })).toMatchObject({ status: 'ready', reasons: [] });
  });
});

describe('EventLoopWatch', () => {
  it('sees the event loop held', async () => {
    const watch = new EventLoopWatch();
    try {
      await new Promise((r) => setTimeout(r, 60)); // the watch's sampling timer armed (it starts with the loop's next turn)
      const t = Date.now();
      while (Date.now() - t < 300); // hold the loop
      // The watch's sampling timer, held with it, runs late once the loop is free, and records the delay.
      await eventually(() => watch.maxMs >= 250, { timeoutMs: 5_000, what: () => `a delay of 250 ms seen (seen: ${watch.maxMs} ms)` });
    } finally {
      watch.stop();
    }
  });
});
