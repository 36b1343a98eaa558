// A connection closed 4008 while its opening (a `since=` replay, paced by the client's reading) is
// still being written must be cut between two events, as a live connection is: the documented
// recovery is `since=<last seq received>`, which replays from the next seq, so an event whose first
// frames went out and whose last did not would be lost for good. The opening waited for the socket's
// drain after any frame, often between an `engine.order_filled` and its `trade`; the live frames held
// behind the replay then passed the bound and closed the connection at that point. Found by the full
// soak: `slow-all` missed `trade` frames at the ends of its segments (docs/reliability.md).
import { describe, expect, it } from 'vitest';
import { simpleMatch } from '../../unit/projections/fixtures.js';
import WebSocket from 'ws';
import { waitFor } from '../../support/scripted-sse.js';
import { lastEvent, startStack, untilSlowClosed, wsUrl, type Msg } from './helpers.js';

const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/**
 * A client that only keeps its frames (no schema check per message): six of them read a replay of
 * several MiB each within the 5 s a 4008 close waits before the socket is cut, on a loaded machine.
 */
async function bare(url: string): Promise<{ ws: WebSocket; frames(): Msg[]; closed: Promise<{ code: number }> }> {
  const ws = new WebSocket(url);
  const frames: Msg[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as Msg;
    if (!m.kind.startsWith('stream.')) frames.push(m);
  });
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code) => resolve({ code })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, frames: () => frames, closed };
}

describe('a connection closed during its opening', () => {
  it('has every frame of the last event it received', async () => {
    const s = await startStack({ WS_CLIENT_BUFFER_BYTES: '65536', WS_HISTORY_SIZE: '200000' });
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      let seq = 0;
      const push = (n: number): void => s.engine.push(...Array.from({ length: n }, () => simpleMatch(++seq, at(seq), '100', '1')));
      // A replay far larger than the loopback socket buffers (several MiB): its writing waits for
      // drains the paused clients never give.
      push(25_000);
      // The runtime's own position, not a watching client: a client checking each frame's schema falls
      // behind on a loaded machine and is itself closed 4008 before the last seq (a failed CI run).
      await waitFor(() => s.live.status().maxSeq === seq, 200_000, 'the replay history');
      // Two frames per fill (its passthrough, then its trade): a drain awaited after any frame falls
      // inside an event about half the time; 6 clients make one such cut all but certain.
      const CLIENTS = 6;
      const slow = await Promise.all(Array.from({ length: CLIENTS }, () => bare(wsUrl(s.gw.url, 'kinds=engine.order_filled,trade&since=0'))));
      for (const c of slow) c.ws.pause();
      // Live frames held behind the unfinished replay pass the bound: every client is closed 4008.
      expect(await untilSlowClosed(s.gw.url, CLIENTS, () => push(100), () => seq < 100_000)).toBe(true);
      // Read within the 5 s after the close, before the socket is cut: the close frame arrives.
      for (const c of slow) c.ws.resume();
      const closes = await Promise.all(slow.map((c) => c.closed));
      expect(closes.map((c) => c.code)).toEqual(Array(CLIENTS).fill(4008));
      for (const c of slow) {
        expect(lastEvent(c)).toEqual(['engine.order_filled', 'trade']);
      }
    } finally {
      await s.close();
    }
  }, 240_000);
});
