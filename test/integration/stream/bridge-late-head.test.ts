// A quiet connection asks the engine's head every 2 s to notice a restart nobody announced. On a
// slow link (the soak's engine-trickle fault) that answer can arrive seconds late, after the stream
// has delivered events past it: the head is then below the resume point although the history is
// the same. Compared with the resume point of when the question was asked, it says nothing; the
// soak saw a spurious `stream.reset` ("engine head 44357 is below the resume point 44764") instead.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, seqs, startStack, ticks, type Stack } from './helpers.js';

describe('bridge: an engine head that arrives late', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('is not taken for a replaced history when events passed while it was on its way', async () => {
    s = await startStack();
    const engine = s.engine;
    await engine.waitFor(() => engine.open === 1);
    const ctl = await connect(s.gw.url, 'kinds=engine.tick_start&control=true');
    engine.push(...ticks(1, 3));
    await ctl.waitFor(() => seqs(ctl).length === 3);
    // The next head check of the quiet connection takes the head (3) and answers 1.5 s later; the
    // stream delivers 4..10 in between.
    engine.healthDelayMs = 1_500;
    const asked = engine.healthRequests;
    const answered = engine.healthAnswers;
    await waitFor(() => engine.healthRequests > asked, 10_000, 'a head check');
    engine.push(...ticks(4, 10));
    await ctl.waitFor(() => seqs(ctl).length === 10);
    await waitFor(() => engine.healthAnswers > answered, 10_000, 'the late answer (3, below 10) sent');
    engine.healthDelayMs = 0;
    // Events after it, through the same gateway: by the time they arrive the late answer was judged.
    engine.push(...ticks(11, 12));
    await ctl.waitFor(() => seqs(ctl).length === 12);
    expect(ctl.messages.filter((m) => m.kind === 'stream.reset')).toEqual([]);
    expect(s.live.status().gap).toBeUndefined();
    expect(seqs(ctl)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  }, 30_000);
});
