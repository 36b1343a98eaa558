// Baseline server process: a bare `ws` server that reads the same SSE source, runs the same
// projections and broadcasts every public frame to every client — no filters, no index, no
// history, no per-client bound. What the gateway is compared against. BENCH_BARE_KINDS (a comma
// list) narrows what it sends to those kinds, for every client alike (the capacity bench: trades).
import { request } from 'undici';
import { createParser } from 'eventsource-parser';
import { initialProjectionState, project } from '../src/projections/index.js';
import { type EngineEvent } from '../src/contracts/engine-event.js';
import { frameParty } from '../src/contracts/frame.js';
import { startBroadcastServer, type ServerReport } from './stream-shared.js';

const { clients, url } = await startBroadcastServer();
const only = process.env.BENCH_BARE_KINDS ? new Set(process.env.BENCH_BARE_KINDS.split(',')) : null;

let state = initialProjectionState();
const res = await request(`${process.env.BENCH_SOURCE_URL}/v1/admin/events/stream`, { headers: { authorization: 'Bearer bench' }, bodyTimeout: 0 });
const parser = createParser({
  onEvent: (m) => {
    const out = project(state, JSON.parse(m.data) as EngineEvent);
    state = out.state;
    for (const f of out.frames) {
      if (frameParty(f) !== undefined || (only && !only.has(f.kind))) continue;
      const data = Buffer.from(JSON.stringify(f));
      for (const ws of clients) ws.send(data, { binary: false });
    }
  },
});
void (async () => {
  const decoder = new TextDecoder();
  for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
})();

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'report') {
    (globalThis as { gc?: () => void }).gc?.();
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const r: ServerReport = { rss: mem.rss, heapUsed: mem.heapUsed, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000 };
    process.send!(r);
  }
});
process.send!({ url });
