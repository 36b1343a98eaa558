// The platform's floor for the stream's latency: plain TCP on loopback, no WebSocket, no JSON, no
// filters. W writer processes hold N sockets between them and, per event, write one buffer (the
// event's send time + padding to the size of a typical client's frames) to every socket; one reader
// process holds the N client ends and records, per socket, the time from the send to the read.
// No server can deliver one event to N loopback sockets faster than this on the same machine, so
// it is the yardstick for the gateway's event → client latency (bench/stream.ts prints both).
//
// Run as a module (measureFloor) by bench/stream.ts; the same file is the writer and the reader
// processes (FLOOR_ROLE).
import { fork, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const STAMP = 16; // the send time, ms since the epoch, as 16 ASCII digits

type Msg =
  | { cmd: 'send' }
  | { cmd: 'connect'; ports: number[]; n: number }
  | { cmd: 'reset' }
  | { cmd: 'report' };

function writer(bytes: number): void {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    s.setNoDelay(true);
    sockets.push(s);
    s.on('error', () => {});
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  const pad = Buffer.alloc(bytes - STAMP, 0x61);
  process.on('message', (m: Msg) => {
    if (m.cmd === 'send') {
      const stamp = Buffer.from(String(Date.now()).padStart(STAMP, '0'));
      const c0 = process.cpuUsage();
      for (const s of sockets) {
        s.cork();
        s.write(stamp);
        s.write(pad);
        s.uncork();
      }
      const c = process.cpuUsage(c0);
      process.send!({ cpuMs: (c.user + c.system) / 1000, sockets: sockets.length });
    }
  });
}

function reader(bytes: number): void {
  let latencies: number[] = [];
  const sockets: Socket[] = [];
  process.on('message', async (m: Msg) => {
    if (m.cmd === 'connect') {
      for (let i = 0; i < m.n; i++) {
        const s = connect(m.ports[i % m.ports.length]!, '127.0.0.1');
        let have = 0;
        let stamp = '';
        s.on('data', (d: Buffer) => {
          if (have < STAMP) stamp += d.toString('latin1', 0, Math.min(d.length, STAMP - have));
          have += d.length;
          while (have >= bytes) {
            latencies.push(Date.now() - Number(stamp));
            have -= bytes;
            stamp = '';
          }
        });
        s.on('error', () => {});
        sockets.push(s);
        if (i % 500 === 499) await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 500));
      process.send!({ ok: true });
    } else if (m.cmd === 'reset') {
      latencies = [];
      process.send!({ ok: true, cpuMs: cpuMs() });
    } else if (m.cmd === 'report') {
      const sorted = latencies.slice().sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      process.send!({ received: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0, cpuMs: cpuMs() });
    }
  });
  process.send!({ ready: true });
}

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

export interface FloorResult {
  clients: number;
  writers: number;
  bytes: number;
  events: number;
  received: number;
  p50: number;
  p99: number;
  max: number;
  /** CPU per event, summed over the writers / in the reader. */
  writerCpuMsPerEvent: number;
  readerCpuMsPerEvent: number;
}

function ask<T>(p: ChildProcess, msg?: Msg): Promise<T> {
  return new Promise((resolve) => {
    p.once('message', (m) => resolve(m as T));
    if (msg) p.send(msg);
  });
}

/** `events` events, `gapMs` apart, each written to all `clients` sockets by `writers` processes. */
export async function measureFloor(clients: number, writers: number, bytes: number, events: number, gapMs: number): Promise<FloorResult> {
  const self = fileURLToPath(import.meta.url);
  const spawn = (role: string) => fork(self, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, FLOOR_ROLE: role, FLOOR_BYTES: String(bytes) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ws = Array.from({ length: writers }, () => spawn('writer'));
  const rd = spawn('reader');
  try {
    const ports = (await Promise.all(ws.map((w) => ask<{ port: number }>(w)))).map((p) => p.port);
    await ask(rd);
    await ask(rd, { cmd: 'connect', ports, n: clients });
    const before = await ask<{ cpuMs: number }>(rd, { cmd: 'reset' });
    let writerCpu = 0;
    for (let e = 0; e < events; e++) {
      const sent = await Promise.all(ws.map((w) => ask<{ cpuMs: number }>(w, { cmd: 'send' })));
      writerCpu += sent.reduce((a, s) => a + s.cpuMs, 0);
      await new Promise((r) => setTimeout(r, gapMs));
    }
    const r = await ask<{ received: number; p50: number; p99: number; max: number; cpuMs: number }>(rd, { cmd: 'report' });
    return {
      clients,
      writers,
      bytes,
      events,
      received: r.received,
      p50: r.p50,
      p99: r.p99,
      max: r.max,
      writerCpuMsPerEvent: writerCpu / events,
      readerCpuMsPerEvent: (r.cpuMs - before.cpuMs) / events,
    };
  } finally {
    for (const p of [...ws, rd]) p.kill();
  }
}

const role = process.env.FLOOR_ROLE;
if (role === 'writer') writer(Number(process.env.FLOOR_BYTES));
else if (role === 'reader') reader(Number(process.env.FLOOR_BYTES));
