// A slow consumer is closed (4008) between two events, never inside one: the documented recovery is
// to reconnect with `since=<last seq received>`, which replays from the next seq, so the frames of
// an event cut in half would be lost for good. Found by the soak (docs/reliability.md): a client
// resuming after 4008 missed the `trade` of the fill whose passthrough frame it had received.
import { describe, expect, it } from 'vitest';
import { simpleMatch } from '../../unit/projections/fixtures.js';
import { connect, lastEvent, startStack, untilSlowClosed } from './helpers.js';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

describe('slow consumers are closed between events', () => {
  it('a client closed with 4008 has every frame of the last event it received', async () => {
    const s = await startStack({ WS_CLIENT_BUFFER_BYTES: '65536' });
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      // Each fill gives these clients 7 frames of one seq (trade, then candle.update × 6), so the bound
      // is crossed inside an event far more often than at its first frame: 4 clients make a cut event
      // all but certain when the gateway closes without regard to event boundaries.
      const CLIENTS = 4;
      const slow = await Promise.all(Array.from({ length: CLIENTS }, () => connect(s.gw.url, 'kinds=trade,candle.update')));
      for (const c of slow) c.ws.pause();
      let seq = 0;
      // Push until every client was closed (the gateway's counter says so; a paused client cannot read its close).
      const push = (): void => s.engine.push(...Array.from({ length: 200 }, () => simpleMatch(++seq, at(seq), '100', '1')));
      expect(await untilSlowClosed(s.gw.url, CLIENTS, push, () => seq < 60_000)).toBe(true);
      for (const c of slow) c.ws.resume();
      const closes = await Promise.all(slow.map((c) => c.closed));
      expect(closes.map((c) => c.code)).toEqual(Array(CLIENTS).fill(4008));
      for (const c of slow) {
        expect(lastEvent(c)).toEqual(['trade', 'candle.update/1m', 'candle.update/5m', 'candle.update/15m', 'candle.update/30m', 'candle.update/1h', 'candle.update/4h', 'candle.update/1d', 'candle.update/1w']);
        expect(c.schemaErrors).toEqual([]);
      }
    } finally {
      await s.close();
    }
  }, 120_000);
});
