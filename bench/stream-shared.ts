// Shared pieces of the stream benchmark: the synthetic engine events and the IPC message shapes.
import { createServer } from 'node:http';
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
