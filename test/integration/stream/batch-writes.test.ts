// One batch (the frames of an SSE chunk) is written to each client as its own path of frames
// (src/stream/frame-path.ts): clients given the same frames share one joined Buffer, a long path of
// one client alone is written frame by frame. Either way each real client receives exactly its
// frames, in order, whole.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Frame } from '../../../src/contracts/frame.js';
import { JOIN_MAX_BYTES } from '../../../src/stream/frame-path.js';
import { StreamHub } from '../../../src/stream/hub.js';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import { parseSubscription } from '../../../src/stream/subscription.js';

describe('a batch of frames', () => {
  let server: Server;
  let hub: StreamHub;
  let url: string;
  beforeAll(async () => {
    hub = new StreamHub({ enabled: true, bufferBytes: 1 << 24, pingMs: 60_000, historySize: 1_000, metrics: StreamMetrics.for(new Registry()), logger: pino({ level: 'silent' }) as never });
    server = createServer();
    server.on('upgrade', (req, socket, head) => hub.accept(req, socket, head, parseSubscription(new URL(req.url!, 'http://x').searchParams, null)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/stream`;
  });
  afterAll(async () => {
    await hub.closeAll();
    server.close();
  });

  async function client(query: string, expected: number): Promise<{ seqs: Promise<Array<[number, string]>> }> {
    const ws = new WebSocket(`${url}?${query}&snapshot=false`);
    const got: Array<[number, string]> = [];
    const seqs = new Promise<Array<[number, string]>>((resolve) => {
      ws.on('message', (data) => {
        const f = JSON.parse(String(data)) as Frame;
        got.push([f.seq, f.market!]);
        if (got.length === expected) {
          ws.close();
          resolve(got);
        }
      });
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return { seqs };
  }

  it('reaches every client with its own frames in order, shared or alone, short or long', async () => {
    const N = 80;
    const pad = 'x'.repeat(600);
    const frames: Frame[] = Array.from({ length: N }, (_, i) => ({
      kind: 'trade',
      seq: i + 1,
      ts: '2026-11-21T10:00:00.000Z',
      market: i % 2 === 0 ? 'BTC-PERP' : 'ETH-PERP',
      payload: { pad },
    }));
    const all = [await client('kinds=trade', N), await client('kinds=trade', N), await client('', N)];
    const btc = await client('markets=BTC-PERP', N / 2); // alone on its path, longer than JOIN_MAX_BYTES
    const eth = await client('markets=ETH-PERP&kinds=trade', N / 2);
    // A bounded wait, kept: the openings are done and every client is live, which the hub does not
    // expose (a connection is counted from its upgrade, before its opening).
    await new Promise((r) => setTimeout(r, 100));
    expect((N / 2) * 600).toBeGreaterThan(JOIN_MAX_BYTES);
    hub.batched(() => hub.publishAll(frames));
    const expected = (keep: (f: Frame) => boolean) => frames.filter(keep).map((f) => [f.seq, f.market]);
    for (const c of all) expect(await c.seqs).toEqual(expected(() => true));
    expect(await btc.seqs).toEqual(expected((f) => f.market === 'BTC-PERP'));
    expect(await eth.seqs).toEqual(expected((f) => f.market === 'ETH-PERP'));
  });
});
