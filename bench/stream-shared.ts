// Shared pieces of the stream benchmark: the synthetic engine events and the IPC message shapes.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { EngineEvent } from '../src/contracts/engine-event.js';

export const MARKETS = ['BTC-PERP', 'ETH-PERP', 'SOL-PERP'];
const PARTY_A = `bench-a::${'a'.repeat(64)}`;
const PARTY_B = `bench-b::${'b'.repeat(64)}`;

/** A realistic fill: two legs, ts = the moment it is sent (the clients measure latency from it). */
export function syntheticFill(seq: number, tsMs: number): EngineEvent {
  const market = MARKETS[seq % MARKETS.length]!;
  const price = `${60000 + (seq % 50)}.5`;
  const leg = (party: string, role: 'taker' | 'maker', side: 'buy' | 'sell', size: string) => ({
    party,
    orderId: `o-${seq}-${role}`,
    role,
    side,
    size: '0.0100000000',
    price,
    fee: '0.3000000000',
    positionId: `pos-${party.slice(6, 7)}`,
    positionSize: size,
    entryPrice: '60000.0000000000',
    realizedPnl: '0.0000000000',
    newBalance: '100000.0000000000',
  });
  return {
    seq,
    kind: 'engine.order_filled',
    ts: new Date(tsMs).toISOString(),
    market,
    payload: {
      matchId: `m${seq}`,
      price,
      size: '0.0100000000',
      takerSide: 'buy',
      takerOrderId: `o-${seq}-taker`,
      makerOrderId: `o-${seq}-maker`,
      legs: [leg(PARTY_A, 'taker', 'buy', '1.0000000000'), leg(PARTY_B, 'maker', 'sell', '-1.0000000000')],
    },
  };
}

export function sseFrame(e: EngineEvent): string {
  return `id: ${e.seq}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;
}

export type ClientCmd =
  | { cmd: 'connect'; url: string; queries: string[]; n: number }
  | { cmd: 'reset' }
  | { cmd: 'report' }
  /** The latency samples (ms) since the last reset, unsorted. */
  | { cmd: 'samples' }
  | { cmd: 'closeAll' };

export interface ClientReport {
  open: number;
  received: number;
  closedAbnormally: number;
  firstAt: number;
  lastAt: number;
  latencyMs: { p50: number; p99: number; max: number; samples: number };
  /** CPU the client process has used since it started (user + system, ms). */
  cpuMs: number;
}

export interface ServerReport {
  rss: number;
  heapUsed: number;
  cpuUserMs: number;
  cpuSystemMs: number;
}

/**
 * The plain `ws` server of the comparison servers (bench/stream-bare.ts, bench/stream-book-floor.ts):
 * every open connection in one set, nothing else. Listens on a free loopback port.
 */
export async function startBroadcastServer(): Promise<{ clients: Set<WebSocket>; url: string }> {
  const server = createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  const clients = new Set<WebSocket>();
  wss.on('connection', (ws) => {
    clients.add(ws);
    ws.on('close', () => clients.delete(ws));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { clients, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/**
 * The synthetic engine the stream benches read: the admin SSE stream (every connection gets what
 * `emit` writes from then on, and a comment line every 5 s), the market list and an empty book.
 * `emit(n)` writes n fills stamped now (one write per stream), numbered on from the last.
 */
export async function startSyntheticSource(): Promise<{ url: string; emit(n: number): void; readonly seq: number; close(): void }> {
  const streams = new Set<ServerResponse>();
  let seq = 0;
  const source = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/v1/admin/events/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      streams.add(res);
      const hb = setInterval(() => res.write(': hb\n\n'), 5_000);
      res.on('close', () => {
        clearInterval(hb);
        streams.delete(res);
      });
    } else if (url.pathname === '/v1/markets') {
      res.end(JSON.stringify({ markets: MARKETS.map((symbol) => ({ symbol, status: 'active' })) }));
    } else if (url.pathname === '/v1/orderbook') {
      res.end(JSON.stringify({ market: url.searchParams.get('market'), seq: 0, depth: 20, bids: [], asks: [] }));
    } else {
      res.writeHead(200).end('{"ok":true}');
    }
  });
  await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(source.address() as AddressInfo).port}`,
    emit(n: number): void {
      let text = '';
      const now = Date.now();
      for (let i = 0; i < n; i++) text += sseFrame(syntheticFill(++seq, now));
      for (const s of streams) s.write(text);
    },
    get seq() {
      return seq;
    },
    close(): void {
      source.closeAllConnections();
      source.close();
    },
  };
}
