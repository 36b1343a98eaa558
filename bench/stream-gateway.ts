// Benchmark server process: the real gateway (loadConfig → createDeps → buildApp → listen, live
// runtime started) reading the synthetic SSE source. Reports memory/CPU over IPC.
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/env.js';
import { createDeps } from '../src/deps.js';
import type { ServerReport } from './stream-shared.js';

const config = loadConfig({
  ENGINE_BASE_URL: process.env.BENCH_SOURCE_URL,
  ENGINE_ADMIN_TOKEN: process.env.BENCH_ADMIN_TOKEN ?? 'bench',
  AUTH_DISABLED: 'true',
  WS_MAX_CONNECTIONS: '50000',
  // Every bench client connects from 127.0.0.1: lift the per-address caps.
  WS_MAX_CONNECTIONS_PER_IP: '50000',
  HTTP_MAX_CONNECTIONS_PER_IP: '0',
  WS_CLIENT_BUFFER_BYTES: String(64 * 1024 * 1024),
  // The book bench (bench/stream-book.ts) polls as the gateway's default does; the other benches not at all.
  WS_ORDERBOOK_POLL_MS: process.env.BENCH_POLL_MS ?? '3600000',
  WS_HISTORY_SIZE: '10000',
  LOG_LEVEL: 'error',
});
const deps = createDeps(config, { logger: pino({ level: 'error' }) });
const app = await buildApp(deps);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
await deps.live!.start();

process.on('message', (m: { cmd: string }) => {
  // A clean exit (not a kill), so `node --cpu-prof` can write its profile.
  if (m.cmd === 'exit') process.exit(0);
  if (m.cmd === 'report') {
    (globalThis as { gc?: () => void }).gc?.();
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const r: ServerReport = { rss: mem.rss, heapUsed: mem.heapUsed, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000 };
    process.send!(r);
  }
});
process.send!({ url: `${address.replace('http', 'ws')}/v1/stream` });

