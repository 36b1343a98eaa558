/**
 * Bytes per client and the CPU they cost (`npm run bench:stream`, after the other stream benches;
 * alone: `tsx bench/stream-bandwidth.ts`). The reference engine and the gateway run as separate
 * processes; this process places orders straight on the engine (a maker quoting around a moving
 * mid, ~200 orders/s on ETH-PERP) and holds N WebSocket clients of the book (orderbook.delta,
 * depth 50) and the trades, one way at a time:
 *   plain      no compression, a delta per change
 *   deflated   compress=deflate (permessage-deflate negotiated)
 *   throttled  throttle=100 and throttle=500 (conflated deltas), uncompressed
 *   both       throttle=100 with compress=deflate
 * Per way: wire bytes per second per client (read from each client's TCP socket, frames and all),
 * messages per second per client, and the gateway's CPU (from /proc) per second of the run.
 * Writes the block between the bandwidth-bench markers of docs/performance.md.
 */
import { shortCheck, sized } from './short.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { writeDocsBlock } from './docs-block.js';
import { freePort, procCpuMs, stop, waitHealthy } from './processes.js';
import { GatewayClient, localParty } from '../packages/client/src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLIENTS = Number(process.env.BENCH_BW_CLIENTS ?? sized(20, 5));
const SECONDS = Number(process.env.BENCH_BW_SECONDS ?? sized(8, 0.6));
const TOKEN = 'bench-bw-token';

function spawnTs(script: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, script)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

const WAYS = [
  { name: 'plain', query: '' },
  { name: 'deflated', query: '&compress=deflate' },
  { name: 'throttled 100 ms', query: '&throttle=100' },
  { name: 'throttled 500 ms', query: '&throttle=500' },
  { name: 'throttled 100 ms + deflated', query: '&throttle=100&compress=deflate' },
] as const;

async function main(): Promise<void> {
  const enginePort = await freePort();
  const gatewayPort = await freePort();
  const engineUrl = `http://127.0.0.1:${enginePort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const engine = spawnTs('sandbox/engine/main.ts', { ENGINE_PORT: String(enginePort), ENGINE_ADMIN_TOKEN: TOKEN, ENGINE_TICK_MS: '1000', ENGINE_COMMIT_MS: '5000' });
  const gateway = spawnTs('src/main.ts', { PORT: String(gatewayPort), HOST: '127.0.0.1', ENGINE_BASE_URL: engineUrl, ENGINE_ADMIN_TOKEN: TOKEN, DATABASE_URL: '', LOG_LEVEL: 'warn', WS_MAX_CONNECTIONS_PER_IP: '1000', WS_DEFLATE_CONNECTIONS_PER_IP: '0' });
  let quoting = true;
  try {
    await waitHealthy(engineUrl);
    await waitHealthy(gatewayUrl);
    const maker = new GatewayClient({ baseUrl: engineUrl, retry: { retries: 0 } });
    const signer = await localParty('bwmaker');
    await maker.createSession(signer);
    const fund = await fetch(`${engineUrl}/v1/admin/faucet`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ party: signer.party, amount: '1000000000' }) });
    await fund.text();
    // The maker: 20 orders every 100 ms around a mid that walks, so levels appear, change and cross.
    let mid = 2000;
    let placed = 0;
    const started = performance.now();
    // Straight on the engine (it has no batch route): 20 single orders at once.
    let resting: string[] = [];
    const single = async (): Promise<void> => {
      while (quoting) {
        mid += Math.round((Math.random() - 0.5) * 6);
        // The previous round's orders are cancelled, so the book keeps its size and levels also go.
        const cancel = resting;
        resting = [];
        await Promise.all(cancel.map((id) => maker.cancelOrder(id).catch(() => undefined)));
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => {
            const buy = Math.random() < 0.5;
            const off = Math.floor(Math.random() * 30) - 3;
            placed++;
            return maker.placeOrder({ market: 'ETH-PERP', side: buy ? 'buy' : 'sell', type: 'limit', size: '0.1', price: String(buy ? mid - off : mid + off) }).catch(() => undefined);
          }),
        );
        for (const a of answers) if (a && a.ok && 'orderId' in a && a.status === 'open') resting.push(a.orderId);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const load = single();
    await new Promise((r) => setTimeout(r, sized(2_000, 1_000))); // a book with levels first
    const tcp = (ws: WebSocket) => (ws as unknown as { _socket: Socket })._socket;
    const openClients = (query: string, n: number) =>
      Promise.all(
        Array.from({ length: n }, () =>
          new Promise<{ ws: WebSocket; count: () => number }>((resolve, reject) => {
            const ws = new WebSocket(`${gatewayUrl.replace('http', 'ws')}/v1/stream?kinds=orderbook.delta&markets=ETH-PERP&depth=50${query}`, { perMessageDeflate: true });
            let n = 0;
            ws.on('message', () => n++);
            ws.once('open', () => resolve({ ws, count: () => n }));
            ws.once('error', reject);
          }),
        ),
      );
    const settle = () => new Promise((r) => setTimeout(r, sized(500, 300)));

    // Bytes: every way at once, over the same window of the same book.
    const all = await Promise.all(WAYS.map((w) => openClients(w.query, CLIENTS)));
    await settle(); // past the snapshots
    const bytes0 = all.map((cs) => cs.map((c) => tcp(c.ws).bytesRead));
    const msgs0 = all.map((cs) => cs.map((c) => c.count()));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const window = (performance.now() - t0) / 1000;
    const traffic = all.map((cs, w) => ({
      negotiated: cs[0]!.ws.extensions.includes('permessage-deflate'),
      bytes: Math.round(cs.reduce((a, c, i) => a + tcp(c.ws).bytesRead - bytes0[w]![i]!, 0) / cs.length / window),
      msgs: Math.round((cs.reduce((a, c, i) => a + c.count() - msgs0[w]![i]!, 0) / cs.length / window) * 10) / 10,
    }));
    for (const cs of all) for (const c of cs) c.ws.close();
    await settle();

    // CPU: one way at a time, the gateway's CPU above its CPU with no client under the same load.
    const cpuOver = async (seconds: number): Promise<number> => {
      const c0 = procCpuMs(gateway.pid) ?? 0;
      const t = performance.now();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      return ((procCpuMs(gateway.pid) ?? 0) - c0) / ((performance.now() - t) / 1000);
    };
    const idle = await cpuOver(SECONDS);
    const results = [];
    for (const [w, way] of WAYS.entries()) {
      const cs = await openClients(way.query, CLIENTS);
      await settle();
      const cpu = await cpuOver(SECONDS);
      for (const c of cs) c.ws.close();
      await settle();
      results.push({
        way: way.name,
        deflateNegotiated: traffic[w]!.negotiated,
        bytesPerSecPerClient: traffic[w]!.bytes,
        messagesPerSecPerClient: traffic[w]!.msgs,
        gatewayCpuMsPerSec: Math.round(cpu - idle),
      });
    }
    for (const r of results) shortCheck(`bandwidth, ${r.way}`, { 'no message': r.messagesPerSecPerClient > 0 ? 0 : 1, 'no byte': r.bytesPerSecPerClient > 0 ? 0 : 1 });
    const ordersPerSec = Math.round(placed / ((performance.now() - started) / 1000));
    quoting = false;
    await load;
    const out = { clients: CLIENTS, seconds: SECONDS, ordersPerSec, loadAverage1m: Math.round(loadavg()[0]! * 100) / 100, machine: { nproc: cpus().length, model: cpus()[0]?.model ?? '?', node: process.version }, results };
    console.log(JSON.stringify(out, null, 2));
    writeDocs(out);
  } finally {
    quoting = false;
    await stop(gateway);
    await stop(engine);
  }
}

function writeDocs(r: any): void {
  const plain = r.results[0];
  const rows = r.results.map(
    (x: any) =>
      `| ${x.way} | ${x.deflateNegotiated ? 'yes' : 'no'} | ${x.bytesPerSecPerClient} B/s (${Math.round((x.bytesPerSecPerClient / plain.bytesPerSecPerClient) * 100)} %) | ${x.messagesPerSecPerClient} | ${x.gatewayCpuMsPerSec} ms/s |`,
  );
  writeDocsBlock('bandwidth-bench', [
    '## Stream bandwidth: plain, deflated, throttled (`npm run bench:stream`, bench/stream-bandwidth.ts)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on ${r.machine.nproc} × ${r.machine.model}, Node ${r.machine.node}; 1-minute load average ${r.loadAverage1m} at the end (the machine was shared with other work: the CPU column is noisy, compare it within a run only). Engine and gateway as separate processes; a maker places and cancels ~${r.ordersPerSec} orders/s straight on the engine around a walking mid (ETH-PERP). ${r.clients} clients per way, each \`kinds=orderbook.delta&markets=ETH-PERP&depth=50\` plus the way's parameters. Bytes: every way connected at once, over the same ${r.seconds} s of the same book (after their snapshots), as each client's TCP socket read them (WebSocket framing included). CPU: one way at a time for ${r.seconds} s, the gateway's CPU (/proc, user + system) above its CPU with no client under the same load, for all ${r.clients} clients of the way.`,
    '',
    '| Way | Deflate negotiated | Bytes/s per client (vs plain) | Messages/s per client | Gateway CPU for the clients |',
    '|---|---|---|---|---|',
    ...rows,
  ]);
}

await main();
