// A ping during a paced opening (ADR 0176, found by a review): "a since= replay is paced and never counts"
// (docs/stream.md, close code 4008). StreamClient.onPing judges the pong against ws.bufferedAmount,
// which during an opening holds the replay's own unjudged bytes: once the opening waits for the
// client's drain with an item larger than what is left of the bound, any ping from the client closes
// it 4008, though it is only being paced. Before ADR 0176 ws answered the ping and the replay went on.
// Here an event's frame is larger than a small bound (64 KiB); with the default 1 MiB bound it takes
// an opening item (a frame, or the frames of one event) over about 1 MiB.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitFor } from '../../support/scripted-sse.js';
import { startStack, ts, wsUrl, type Stack } from './helpers.js';

const pad = 'x'.repeat(70_000);
const big = (seq: number) => ({ seq, kind: 'engine.tick_start', ts: ts(seq), payload: { tick: seq, pad } });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function metric(url: string, line: string): Promise<boolean> {
  return (await (await fetch(`${url}/metrics`)).text()).includes(line);
}

describe('a client that pings while its replay is paced', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('is not closed 4008 (the replay never counts), and gets its pong and the whole replay once it reads', async () => {
    s = await startStack({ WS_CLIENT_BUFFER_BYTES: '65536', WS_HISTORY_SIZE: '1000' });
    await s.engine.waitFor(() => s!.engine.open === 1);
    const N = 160; // ≈ 11 MB: more than loopback socket buffers hold, so the opening waits for the drain
    s.engine.push(...range(1, N).map(big));
    await waitFor(() => s!.live.status().maxSeq === N, 20_000, 'the gateway to hold the history');

    const ws = new WebSocket(wsUrl(s.gw.url, 'kinds=engine.tick_start&since=0'));
    const socket = () => (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    const seqs: number[] = [];
    let pongs = 0;
    let closeCode: number | null = null;
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { seq?: number; kind: string };
      if (m.kind === 'engine.tick_start') seqs.push(m.seq!);
    });
    ws.on('pong', () => pongs++);
    ws.on('close', (code) => (closeCode = code));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        socket().pause(); // reads nothing for a moment: the replay is paced, never judged
        resolve();
      });
      ws.once('error', reject);
    });
    // A keep-alive ping now and then while not reading (as many client libraries send).
    for (let round = 0; round < 40; round++) {
      ws.ping(Buffer.from('keepalive'));
      // Pacing: a ping every 50 ms.
      await new Promise((r) => setTimeout(r, 50));
    }
    const closedSlow = await metric(s.gw.url, 'bff_ws_slow_client_closes_total 1');
    socket().resume();
    await waitFor(() => seqs.length === N || closeCode !== null, 30_000, 'the replay or a close');
    expect(closedSlow).toBe(false);
    expect(closeCode).toBeNull();
    expect(seqs).toEqual(range(1, N));
    await waitFor(() => pongs > 0, 5_000, 'a pong');
    ws.close();
  }, 90_000);
});
