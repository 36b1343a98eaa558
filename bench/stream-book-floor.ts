// Floor server process of bench/stream-book.ts: the least any server can do to tell N WebSocket
// clients that a market's book changed. It reads the same engine stream and, for every event that
// changes the watched market's book, writes the event's own text to every client, framed once per
// received chunk as the gateway batches (`{"seq":<last>,"events":[...]}`: one write per socket per
// chunk; no book kept, no views, no filters, no per-client bound). The gap between this and the gateway
// is what keeping the book and making per-view deltas costs; what is left is the machine's.
import type { WebSocket } from 'ws';
import { request } from 'undici';
import { createParser } from 'eventsource-parser';
import { wireFrame } from '../src/stream/client.js';
import { startBroadcastServer } from './stream-shared.js';

const MARKET = process.env.BENCH_BOOK_MARKET ?? 'BTC-PERP';
const BOOK_KINDS = new Set(['engine.order_placed', 'engine.order_filled', 'engine.order_cancelled']);
const { clients, url } = await startBroadcastServer();

const raw = (ws: WebSocket) => (ws as unknown as { _socket: { write(b: Buffer): boolean } })._socket;
const res = await request(`${process.env.BENCH_SOURCE_URL}/v1/admin/events/stream`, { headers: { authorization: 'Bearer bench' }, bodyTimeout: 0 });
let batch: string[] = [];
let lastSeq = 0;
const parser = createParser({
  onEvent: (m) => {
    const e = JSON.parse(m.data) as { kind: string; market?: string; seq: number };
    if (e.market !== MARKET || !BOOK_KINDS.has(e.kind)) return;
    batch.push(m.data);
    lastSeq = e.seq;
  },
});
void (async () => {
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
    if (batch.length === 0) continue;
    const wire = wireFrame(Buffer.from(`{"seq":${lastSeq},"events":[${batch.join(',')}]}`));
    batch = [];
    for (const ws of clients) raw(ws).write(wire);
  }
})();

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'exit') process.exit(0);
});
process.send!({ url });
