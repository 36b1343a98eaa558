// The engine SSE bridge holds a bounded amount of an unfinished line (SSE_MAX_EVENT_BYTES): an
// engine that sends a `data:` line that never ends (bytes keep arriving, so the silence watchdog
// never fires) has its connection dropped, counted and logged, and the bridge reconnects from its
// last seq and goes on. Judged on what the bridge does (drop, reconnect, resume), not on timings.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, seqs, startStack, ticks, type Stack } from './helpers.js';

const BOUND = 65_536;

describe('SSE bridge: a line that never ends', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('drops the connection past the bound, reconnects from its last seq and delivers what follows', async () => {
    s = await startStack({ SSE_MAX_EVENT_BYTES: String(BOUND), SSE_IDLE_MS: '60000' });
    await s.engine.waitFor(() => s!.engine.open === 1);
    const c = await connect(s.gw.url, 'kinds=engine.tick_start');
    s.engine.push(...ticks(1, 3));
    await c.waitFor(() => seqs(c).length === 3);

    s.engine.endlessLine(16_384);
    // The bridge lets go of the stream once the line passes the bound, and comes back.
    await waitFor(() => s!.engine.connections.length >= 2, 10_000, 'the bridge to drop the endless line and reconnect');
    const written = s.engine.endlessBytes;
    s.engine.endlessLine(0);
    expect(written).toBeGreaterThanOrEqual(BOUND);
    // Resumed from its last seq (one early, to compare the event it already has).
    expect(s.engine.connections[1]!.lastEventId).toBe('2');
    const metrics = await (await fetch(`${s.gw.url}/metrics`)).text();
    expect(metrics).toMatch(/bff_sse_oversized_total [1-9]/);

    await waitFor(() => s!.engine.open === 1, 10_000, 'a normal stream again');
    s.engine.push(...ticks(4, 5));
    await c.waitFor(() => seqs(c).includes(5));
    expect(seqs(c)).toEqual([1, 2, 3, 4, 5]);
  });
});
