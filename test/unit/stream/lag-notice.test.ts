// stream.lagging (src/stream/lag-notice.ts): sent while the replica is behind the engine, once more
// with lagging: false when it has caught up, and never while it is current.
import { describe, expect, it } from 'vitest';
import { LagNotice } from '../../../src/stream/lag-notice.js';
import type { StreamLag } from '../../../src/stream/live-view.js';
import { schemaFor } from '../../../src/stream/frame-kinds.js';
import { Value } from 'typebox/value';

describe('LagNotice', () => {
  it('tells control connections while behind, then once that it caught up', () => {
    const sent: Array<Record<string, any>> = [];
    let lag: StreamLag = { engineHead: 100, events: 0, seconds: 0, behind: false, stalled: false };
    let head = 100;
    const notice = new LagNotice({ lag: () => lag, head: () => head, announce: (m) => sent.push(m) });

    notice.tick();
    expect(sent).toEqual([]); // current: nothing

    lag = { engineHead: 400, events: 300, seconds: 6.04, behind: true, stalled: true };
    notice.tick();
    notice.tick();
    expect(sent.map((m) => m.payload)).toEqual([
      { lagging: true, headSeq: 100, engineHeadSeq: 400, behindEvents: 300, behindSeconds: 6 },
      { lagging: true, headSeq: 100, engineHeadSeq: 400, behindEvents: 300, behindSeconds: 6 },
    ]);
    expect(sent[0]).toMatchObject({ kind: 'stream.lagging', seq: 100 });
    expect(Value.Check(schemaFor('stream.lagging')!, sent[0])).toBe(true);

    // Under the bound but still catching up: no end notice yet.
    lag = { engineHead: 420, events: 20, seconds: 1, behind: false, stalled: false };
    head = 400;
    notice.tick();
    expect(sent).toHaveLength(2);

    lag = { engineHead: 420, events: 0, seconds: 0, behind: false, stalled: false };
    head = 420;
    notice.tick();
    notice.tick();
    expect(sent).toHaveLength(3);
    expect(sent[2]!.payload).toEqual({ lagging: false, headSeq: 420, engineHeadSeq: 420, behindEvents: 0, behindSeconds: 0 });
  });

  it('says nothing without a lag (no JetStream)', () => {
    const sent: unknown[] = [];
    new LagNotice({ lag: () => undefined, head: () => 5, announce: (m) => sent.push(m) }).tick();
    expect(sent).toEqual([]);
  });
});
