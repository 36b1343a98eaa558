// A since= replay is paced by the client's own reading (the socket's drain), not written at once:
// a replay far larger than the slow-consumer bound reaches a fast client whole, while a client that
// never reads is still closed with 4008 once live traffic piles up behind its stalled replay.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, startStack, ts, wsUrl, type Stack } from './helpers.js';

const pad = 'x'.repeat(16_000);
const big = (seq: number) => ({ seq, kind: 'engine.tick_start', ts: ts(seq), payload: { tick: seq, pad } });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function metric(url: string, line: string): Promise<boolean> {
  return (await (await fetch(`${url}/metrics`)).text()).includes(line);
}

describe('since= replay paced by the drain', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a replay of several MiB (bound 1 MiB) reaches a fast client whole, then live, without 4008', async () => {
    s = await startStack({ WS_CLIENT_BUFFER_BYTES: String(1 << 20), WS_HISTORY_SIZE: '1000' });
    await s.engine.waitFor(() => s!.engine.open === 1);
    const N = 400; // 400 × 16 KB ≈ 6.4 MB: six times the bound
    s.engine.push(...range(1, N).map(big));
    await waitFor(() => s!.live.status().maxSeq === N, 10_000, 'the gateway to hold the history');

    const c = await connect(s.gw.url, 'kinds=engine.tick_start&since=0');
    s.engine.push(big(N + 1)); // live, while the replay may still be going out
    await c.waitFor((m) => m.some((x) => x.seq === N + 1), 30_000);
    expect(c.frames().map((f) => f.seq)).toEqual(range(1, N + 1));
    expect(c.messages.filter((m) => m.kind.startsWith('stream.')).map((m) => m.kind)).toEqual(['stream.subscribed']);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    expect(await metric(s.gw.url, 'bff_ws_slow_client_closes_total 0')).toBe(true);
    c.ws.close();
  }, 60_000);

  it('a client that never reads its replay is closed with 4008 on live traffic', async () => {
    s = await startStack({ WS_CLIENT_BUFFER_BYTES: String(1 << 20), WS_HISTORY_SIZE: '1000' });
    await s.engine.waitFor(() => s!.engine.open === 1);
    const N = 600; // ≈ 9.6 MB: more than loopback socket buffers hold
    s.engine.push(...range(1, N).map(big));
    await waitFor(() => s!.live.status().maxSeq === N, 10_000, 'the gateway to hold the history');

    const ws = new WebSocket(wsUrl(s.gw.url, 'kinds=engine.tick_start&since=0'));
    const socket = () => (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    let frames = 0;
    ws.on('message', () => frames++);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        socket().pause(); // never reads from here on
        resolve();
      });
      ws.once('error', reject);
    });
    // Replay alone never closes it, however stalled: only live frames held behind it count.
    let seq = N;
    for (let round = 0; round < 200 && !(await metric(s.gw.url, 'bff_ws_slow_client_closes_total 1')); round++) {
      s.engine.push(...range(seq + 1, seq + 10).map(big)); // 160 KB of live traffic per round
      seq += 10;
      // Pacing: a round every 20 ms.
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await metric(s.gw.url, 'bff_ws_slow_client_closes_total 1')).toBe(true);
    socket().resume();
    const close = await closed;
    expect(close.code).toBe(4008);
    expect(close.reason).toContain('slow consumer');
    expect(frames).toBeLessThan(seq);
    // The live frames that tipped it over were held (at most the bound), not written: about 1 MiB.
    expect(seq - N).toBeGreaterThanOrEqual(60);
  }, 60_000);
});
