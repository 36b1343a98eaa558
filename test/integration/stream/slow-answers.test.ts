// Every byte the gateway writes to a client counts towards its slow-consumer bound, not only the
// frames of events: answers to its messages (`stream.error`, `stream.answer`, `stream.ack`) and the
// pongs to its pings too. A client that sends and never reads was otherwise buffered without end:
// answers went out with seq 0, and once one had, every later seq-0 write passed as "the rest of
// the same event"; ws answered pings itself, outside any bound. Such a client is closed with 4008
// like any slow reader, and a client that reads keeps receiving meanwhile.
import { describe, expect, it } from 'vitest';
import { simpleMatch } from '../../unit/projections/fixtures.js';
import { connect, startStack, ts, untilSlowClosed, type TestClient } from './helpers.js';

// A flood is allowed through the inbound bound here: what is judged is what the gateway writes back.
const ENV = { WS_CLIENT_BUFFER_BYTES: '65536', WS_CLIENT_MESSAGES_PER_S: '100000', WS_CLIENT_MESSAGE_BURST: '1000000', WS_ADDRESS_MESSAGES_PER_S: '0' };
/** Loopback socket buffers take several MiB before the gateway's own queue grows: up to 100 MiB of answers. */
const MAX_MESSAGES = 400_000;

async function readerKeepsUp(reader: TestClient, push: (seq: number) => void, seq: number): Promise<void> {
  push(seq);
  await reader.waitFor((ms) => ms.some((m) => m.kind === 'trade' && m.seq === seq));
}

describe('answers and pongs count towards the slow-consumer bound', () => {
  it('a client that sends requests and never reads is closed with 4008; a reader is not delayed', async () => {
    const s = await startStack(ENV);
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      const reader = await connect(s.gw.url, 'kinds=trade');
      const greedy = await connect(s.gw.url, 'kinds=trade');
      greedy.ws.pause();
      // Each is answered `stream.error` bad_request (an unknown op), about 250 bytes.
      const message = JSON.stringify({ op: 'order.nope', id: 'x'.repeat(64) });
      let sent = 0;
      const step = (): void => {
        for (let i = 0; i < 4_000; i++) greedy.ws.send(message);
        sent += 4_000;
      };
      expect(await untilSlowClosed(s.gw.url, 1, step, () => sent < MAX_MESSAGES)).toBe(true);
      await readerKeepsUp(reader, (seq) => s.engine.push(simpleMatch(seq, ts(seq), '100', '1')), 1);
      greedy.ws.resume();
      expect((await greedy.closed).code).toBe(4008);
      expect(greedy.messages.filter((m) => m.kind === 'stream.error').every((m) => m.payload.code === 'bad_request')).toBe(true);
      expect(reader.ws.readyState).toBe(reader.ws.OPEN);
      expect(reader.schemaErrors).toEqual([]);
      reader.ws.close();
    } finally {
      await s.close();
    }
  }, 120_000);

  it('a client that pings and never reads is closed with 4008 (the pongs count)', async () => {
    const s = await startStack(ENV);
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      // A client that reads gets its pong, its payload echoed.
      const polite = await connect(s.gw.url, 'kinds=trade');
      const pong = new Promise<Buffer>((resolve) => polite.ws.once('pong', resolve));
      polite.ws.ping(Buffer.from('are you there'));
      expect((await pong).toString()).toBe('are you there');
      polite.ws.close();
      const greedy = await connect(s.gw.url, 'kinds=trade');
      greedy.ws.pause();
      // The largest payload a ping may carry (125 bytes), echoed by the pong.
      const payload = Buffer.alloc(125, 7);
      let sent = 0;
      const step = (): void => {
        for (let i = 0; i < 4_000; i++) greedy.ws.ping(payload);
        sent += 4_000;
      };
      expect(await untilSlowClosed(s.gw.url, 1, step, () => sent < MAX_MESSAGES * 2)).toBe(true);
      greedy.ws.resume();
      expect((await greedy.closed).code).toBe(4008);
    } finally {
      await s.close();
    }
  }, 120_000);
});
