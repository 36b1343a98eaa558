// Client process of bench/stream-book.ts: WebSocket connections to the server under test; counts
// frames and bytes, and on watched connections records every live frame's seq with its receive
// time, so the orchestrator can tell when each engine event first showed on a screen. Two of these
// run: the load (998 unwatched connections) and the probe (the first and the last connection of the
// fan-out, watched), so a watched frame's time is when that one socket got it, not when a process
// reading 1 000 sockets got round to it (which a real screen, holding one socket, never waits for).
// Driven over IPC.
import WebSocket from 'ws';

const sockets: WebSocket[] = [];
let bytes = 0;
let frames = 0;
let startedAt = 0;
let samples: Array<Array<[number, number]>> = [];
const SEQ = /"seq":(\d+)/;

function onMessage(data: WebSocket.RawData, watched: number): void {
  const now = performance.timeOrigin + performance.now();
  const buf = data as Buffer;
  bytes += buf.length;
  frames++;
  if (watched < 0) return;
  const text = buf.toString('latin1');
  if (text.includes('"snapshot":true')) return;
  const m = SEQ.exec(text);
  if (m) samples[watched]!.push([Number(m[1]), now]);
}

process.on('message', async (m: { cmd: 'connect'; url: string; n: number; watch: boolean } | { cmd: 'reset' } | { cmd: 'report' } | { cmd: 'closeAll' }) => {
  if (m.cmd === 'connect') {
    for (let i = 0; i < m.n; i += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, m.n - i) }, () => {
          const watched = m.watch ? samples.push([]) - 1 : -1;
          const ws = new WebSocket(m.url, { perMessageDeflate: false, skipUTF8Validation: true });
          sockets.push(ws);
          ws.on('message', (d) => onMessage(d, watched));
          return new Promise<void>((resolve, reject) => {
            ws.once('open', () => resolve());
            ws.once('error', reject);
          });
        }),
      );
    }
    process.send!({ open: sockets.length });
  } else if (m.cmd === 'reset') {
    bytes = 0;
    frames = 0;
    samples = samples.map(() => []);
    startedAt = performance.timeOrigin + performance.now();
    process.send!({ ok: true });
  } else if (m.cmd === 'report') {
    process.send!({ bytes, frames, samples, seconds: (performance.timeOrigin + performance.now() - startedAt) / 1000, open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length });
  } else if (m.cmd === 'closeAll') {
    for (const s of sockets) s.terminate();
    sockets.length = 0;
    samples = [];
    process.send!({ ok: true });
  }
});
process.send!({ ready: true });
