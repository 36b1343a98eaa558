// The SSE follower against a small fake engine stream whose failures are forced: a dropped
// connection, a repeated event, a gap, a wrong token. It must resume from the last good seq
// (both `?since=` and `Last-Event-ID`) and hand every seq over exactly once, in order.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Follower } from '../../../sandbox/indexer/follower.js';
import type { EngineEvent } from '../../../sandbox/indexer/rows.js';
import { eventually } from '../../support/eventually.js';

const frame = (seq: number): string =>
  `id: ${seq}\nevent: engine.tick_start\ndata: ${JSON.stringify({ seq, kind: 'engine.tick_start', ts: '2026-11-21T10:00:00.000Z', payload: { tick: seq } })}\n\n`;

interface Request {
  since: string | null;
  lastEventId: string | undefined;
  auth: string | undefined;
}

/** Serves one scripted answer per connection, recording how each connection asked. */
async function fakeEngine(script: Array<(res: ServerResponse) => void>): Promise<{ url: string; requests: Request[]; server: Server }> {
  const requests: Request[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ since: url.searchParams.get('since'), lastEventId: req.headers['last-event-id'] as string | undefined, auth: req.headers.authorization });
    const step = script[requests.length - 1];
    if (!step) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hb\n\n'); // keep the last connection open and idle
      return;
    }
    step(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

const sse = (res: ServerResponse, body: string, end: boolean): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(body);
  if (end) res.end();
};

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function follow(url: string, from: number, token = 't0k'): Promise<{ follower: Follower; got: number[]; logs: string[] }> {
  const got: number[] = [];
  const logs: string[] = [];
  const follower = new Follower({
    engineUrl: url,
    adminToken: token,
    from,
    sink: (events: EngineEvent[]) => void got.push(...events.map((e) => e.seq)),
    log: (_level, msg, extra) => logs.push(`${msg} ${JSON.stringify(extra ?? {})}`),
    minBackoffMs: 10,
    maxBackoffMs: 40,
  });
  follower.start();
  cleanup.push(() => follower.stop());
  return { follower, got, logs };
}

describe('engine event stream follower', () => {
  it('resumes after a drop, ignores repeats, and reconnects on a gap', async () => {
    const engine = await fakeEngine([
      (res) => sse(res, frame(3) + frame(4) + frame(5), true), // then the connection drops
      (res) => sse(res, frame(5) + frame(6) + frame(8), false), // 5 repeats (ignored), 8 skips 7
      (res) => sse(res, frame(7) + frame(8) + frame(9), false),
    ]);
    cleanup.push(() => new Promise((r) => { engine.server.closeAllConnections(); engine.server.close(() => r()); }));
    const { got, logs } = await follow(engine.url, 2);
    await eventually(() => got.length >= 7, { timeoutMs: 5_000 });
    expect(got).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(engine.requests.slice(0, 3)).toEqual([
      { since: '2', lastEventId: '2', auth: 'Bearer t0k' },
      { since: '5', lastEventId: '5', auth: 'Bearer t0k' },
      { since: '6', lastEventId: '6', auth: 'Bearer t0k' },
    ]);
    expect(logs.some((l) => l.includes('gap: expected seq 7, got 8'))).toBe(true);
  });

  it('keeps retrying with backoff while the engine refuses the token', async () => {
    const unauthorized = (res: ServerResponse): void => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":"unauthorized"}');
    };
    const engine = await fakeEngine([unauthorized, unauthorized, (res) => sse(res, frame(1), false)]);
    cleanup.push(() => new Promise((r) => { engine.server.closeAllConnections(); engine.server.close(() => r()); }));
    const { got, logs, follower } = await follow(engine.url, 0, 'wrong');
    await eventually(() => got.length === 1, { timeoutMs: 5_000 });
    expect(got).toEqual([1]);
    expect(engine.requests.map((r) => r.since)).toEqual(['0', '0', '0']);
    expect(logs.filter((l) => l.includes('HTTP 401'))).toHaveLength(2);
    expect(follower.connects).toBe(1);
  });
});
