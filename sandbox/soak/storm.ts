// A reconnect storm: many connections opened at once, as after a load balancer restart. Most are
// plain control clients (they must get `stream.subscribed`); a few resume from 3 000 seqs back and
// must read their replay up to the head at full speed without being closed as slow (4008).
import WebSocket from 'ws';

export interface StormResult {
  clients: number;
  subscribed: number;
  refused: Record<string, number>;
  failed: number;
  resumers: number;
  resumersCaughtUp: number;
  resumersClosed4008: number;
  allInMs: number | null;
}

export async function reconnectStorm(baseUrl: string, n: number, head: number, timeoutMs: number): Promise<StormResult> {
  const t0 = Date.now();
  const resumers = Math.min(10, Math.floor(n / 10));
  const r: StormResult = { clients: n, subscribed: 0, refused: {}, failed: 0, resumers, resumersCaughtUp: 0, resumersClosed4008: 0, allInMs: null };
  const sockets: WebSocket[] = [];
  const done = Array.from({ length: n }, (_, i) => new Promise<void>((resolve) => {
    const resuming = i < resumers;
    const q = resuming ? `since=${Math.max(0, head - 3000)}` : 'control=true&kinds=trade';
    const ws = new WebSocket(`${baseUrl}/v1/stream?${q}`, { perMessageDeflate: false, handshakeTimeout: timeoutMs });
    sockets.push(ws);
    let settled = false;
    const finish = (): void => {
      if (!settled) {
        settled = true;
        resolve();
      }
    };
    ws.on('unexpected-response', (_req, res) => {
      r.refused[String(res.statusCode)] = (r.refused[String(res.statusCode)] ?? 0) + 1;
      res.resume();
      ws.terminate();
      finish();
    });
    ws.on('error', () => {});
    ws.on('close', (code) => {
      if (resuming && code === 4008) r.resumersClosed4008++;
      finish();
    });
    let subscribed = false;
    ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as { kind: string; seq: number; snapshot?: boolean };
      if (f.kind === 'stream.subscribed' && !subscribed) {
        subscribed = true;
        r.subscribed++;
        if (!resuming) finish();
      } else if (resuming && !f.kind.startsWith('stream.') && f.kind !== 'orderbook.snapshot' && f.seq >= head && !settled) {
        r.resumersCaughtUp++;
        finish();
      }
    });
  }));
  const all = Promise.all(done);
  const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((res) => setTimeout(() => res(true), timeoutMs))]);
  if (!timedOut) r.allInMs = Date.now() - t0;
  r.failed = n - r.subscribed - Object.values(r.refused).reduce((a, b) => a + b, 0);
  for (const ws of sockets) ws.terminate();
  return r;
}
