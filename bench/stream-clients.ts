// Benchmark client process: holds N WebSocket connections to a stream server, counts frames and
// samples event→client latency (now − frame ts; every 8th message, ts found without a full parse).
// Driven by its parent over IPC.
import WebSocket from 'ws';
import type { ClientCmd, ClientReport } from './stream-shared.js';

const sockets: WebSocket[] = [];
let received = 0;
let closedAbnormally = 0;
let firstAt = 0;
let lastAt = 0;
let latencies: number[] = [];
const TS = /"ts":"([^"]+)"/;

function onMessage(data: WebSocket.RawData): void {
  const now = Date.now();
  if (received === 0) firstAt = now;
  lastAt = now;
  received++;
  if ((received & 7) === 0 && latencies.length < 2_000_000) {
    const m = TS.exec((data as Buffer).toString('latin1', 0, 160));
    if (m) latencies.push(now - Date.parse(m[1]!));
  }
}

/** Connections refused by the server, by the HTTP status of the refusal (or "error"). */
const refused: Record<string, number> = {};

async function connectAll(url: string, queries: string[], n: number): Promise<void> {
  const BATCH = 250;
  for (let i = 0; i < n; i += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, n - i) }, (_, k) => {
        const q = queries[(i + k) % queries.length]!;
        const ws = new WebSocket(q ? `${url}?${q}` : url, { perMessageDeflate: false, skipUTF8Validation: true });
        ws.on('message', onMessage);
        // A refusal is counted, not thrown: the capacity bench connects past the server's limit.
        return new Promise<void>((resolve) => {
          ws.once('open', () => {
            ws.removeAllListeners('error');
            ws.on('error', () => {}); // the close that follows is counted
            sockets.push(ws);
            ws.on('close', (code) => {
              if (code !== 1000 && code !== 1005) closedAbnormally++;
            });
            resolve();
          });
          ws.once('error', (err) => {
            const status = /Unexpected server response: (\d+)/.exec(err.message)?.[1] ?? 'error';
            refused[status] = (refused[status] ?? 0) + 1;
            resolve();
          });
        });
      }),
    );
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

process.on('message', async (m: ClientCmd) => {
  if (m.cmd === 'connect') {
    await connectAll(m.url, m.queries, m.n);
    process.send!({ ok: true, open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length, refused });
  } else if (m.cmd === 'reset') {
    received = 0;
    latencies = [];
    firstAt = lastAt = 0;
    process.send!({ ok: true });
  } else if (m.cmd === 'report') {
    const sorted = latencies.slice().sort((a, b) => a - b);
    const report: ClientReport = {
      open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length,
      received,
      closedAbnormally,
      firstAt,
      lastAt,
      latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0, samples: sorted.length },
      cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    };
    process.send!(report);
  } else if (m.cmd === 'samples') {
    process.send!(latencies);
  } else if (m.cmd === 'closeAll') {
    for (const s of sockets) s.terminate();
    sockets.length = 0;
    process.send!({ ok: true });
  }
});
process.send!({ ready: true });
