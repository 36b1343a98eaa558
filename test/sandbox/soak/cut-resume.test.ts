// The soak's resuming stream client and its checker across a cut connection, against the gateway
// and an engine over HTTP. A slow consumer that cannot read its 4008 close is cut 5 s later (close
// 1006 at the client): the bytes that reach it end wherever the kernel took the gateway's writes,
// which can be inside an event. The client then resumes from the seq before its last and drops the
// frames of that seq it already has (docs/stream.md "Replay and reconnect"); the checker must find
// every frame the engine's log implies, `trade` frames with their `matchId` included.
import { describe, expect, it } from 'vitest';
import { simpleMatch } from '../../unit/projections/fixtures.js';
import { sleep, startStack, untilSlowClosed } from '../../integration/stream/helpers.js';
import { StreamClient } from '../../../sandbox/soak/stream-client.js';
import { EngineHistory } from '../../../sandbox/soak/engine-log.js';
import type { EngineEventJson } from '../../../sandbox/soak/frames.js';
import { failed, verifySegment } from '../../../sandbox/soak/verify.js';

const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

describe('soak stream client: resuming a cut connection', () => {
  it('every client cut (1006) resumes and gets exactly the engine\'s frames', async () => {
    // A history large enough that every resume is replayed (no stream.gap): what a cut loses shows
    // as missing frames inside one segment.
    const s = await startStack({ WS_CLIENT_BUFFER_BYTES: '65536', WS_HISTORY_SIZE: '2000000' });
    const log = new EngineHistory(0);
    let seq = 0;
    const push = (n: number): void => {
      const events = Array.from({ length: n }, () => simpleMatch(++seq, at(seq), '100', '1'));
      s.engine.push(...events);
      for (const e of events) log.add(JSON.parse(JSON.stringify(e)) as EngineEventJson);
    };
    // Two frames per fill (its passthrough, then its trade): a cut lands between them about half
    // the time; 6 clients make at least one cut inside an event all but certain.
    const CLIENTS = 6;
    const clients = Array.from({ length: CLIENTS }, (_, i) => new StreamClient(s.gw.url.replace(/^http/, 'ws'), {
      name: `cut-${i}`,
      filter: { kinds: 'engine.order_filled,trade' },
      resume: true,
      control: true,
      // Paused 5 s after the start for 14 s: long past the 4008 close and the cut 5 s after it.
      slow: { pauseMs: 30_000, everyMs: 600_000 },
    }));
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      for (const c of clients) c.start();
      push(20);
      // Deliberate: past the clients' pause, 5 s after their start (a schedule, not an event).
      await sleep(5_500);
      // Paced, so that the kernel's socket buffers (several MiB on loopback) fill before the
      // gateway's own queue passes the bound: the 4008 close then waits behind bytes the paused
      // client cannot take, and the socket is cut 5 s later with an event possibly half through.
      expect(await untilSlowClosed(s.gw.url, CLIENTS, () => push(25), () => seq < 200_000)).toBe(true);
      // Until the clients read again, reconnect (resume) and catch up with the head.
      const head = (): number => seq;
      await s.engine.waitFor(() => clients.every((c) => c.connects >= 2), 40_000);
      push(50);
      for (const c of clients) c.calm();
      await s.engine.waitFor(() => clients.every((c) => c.segments.at(-1)!.seqs.at(-1) === head()), 40_000);
      for (const c of clients) c.markOpenAtEnd();
      const verdicts = clients.flatMap((c) => c.segments.map((g) => verifySegment(g, c.spec, [log], new Map([[0, head()]]))).filter((v) => v !== null));
      // Every client was cut (no close frame), none announced a gap: one segment each.
      expect(clients.map((c) => c.closes.get(1006))).toEqual(Array(CLIENTS).fill(1));
      expect(verdicts).toHaveLength(CLIENTS);
      expect(verdicts.filter(failed).map((v) => `${v.client}: ${v.examples.join('; ')}`)).toEqual([]);
    } finally {
      for (const c of clients) c.stop();
      await s.close();
    }
  }, 120_000);
});
