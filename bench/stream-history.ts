// `npm run bench:history` — the replay history's bytes and the cost of framing a published frame,
// two layouts in the same run: each frame's JSON and a framed copy of it (the layout before
// framed-text.ts), against the WebSocket frame alone with the JSON as a view into it.
// Frames are copies of a full soak's history (13:30 UTC, 2026-11-27): of every 100, 77 candle
// updates, 12 trades, 11 order fills (mean 395 bytes in the soak). Run with --expose-gc (the script does).
import { sized } from './short.js';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { framedText } from '../src/stream/framed-text.js';
import { wireFrame } from '../src/stream/client.js';
import { History, type Sent } from '../src/stream/history.js';
import type { Frame } from '../src/contracts/frame.js';

if (typeof globalThis.gc !== 'function') {
  execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: 'inherit' });
  process.exit(0);
}
const gc = globalThis.gc as () => void;

const SIZE = sized(10_000, 1_000); // WS_HISTORY_SIZE's default
const fill = { entryPrice: '3299.4749321266', fee: '0.7111069000', newBalance: '1077570.4840806541', orderId: 'o-2a6c520a-zyf', party: 'bot-2::1b1c7b557f7a093c944f285a365ca03e7ff52ab933fdb8357972483b6250892d', positionId: 'p-2a6c520a-zpb', positionSize: '-0.6740000000', price: '3299.8000000000', realizedPnl: '-0.1401042534', role: 'taker', side: 'buy', size: '0.4310000000' };
function frameAt(seq: number): Frame {
  const ts = new Date(Date.UTC(2026, 10, 27, 13, 0, 0, seq)).toISOString();
  const k = seq % 100;
  if (k < 77) return { kind: 'candle.update', seq, ts, market: 'ETH-PERP', interval: '1m', payload: { openTs: '2026-11-27T13:30:00.000Z', closeTs: '2026-11-27T13:31:00.000Z', open: '3337.6000000000', high: '3337.6000000000', low: '3273.6000000000', close: `${3299 + (seq % 10)}.8000000000`, volume: '99.9960000000', trades: seq % 1000 } } as Frame;
  if (k < 89) return { kind: 'trade', seq, ts, market: 'ETH-PERP', payload: { matchId: `m-${seq}`, side: 'buy', size: '0.4310000000', price: '3299.8000000000', takerOrderId: 'o-2a6c520a-zyf', makerOrderId: 'o-2a6c520a-zuj' } } as Frame;
  return { kind: 'engine.order_filled', seq, ts, market: 'ETH-PERP', payload: { legs: [fill, { ...fill, role: 'maker', side: 'sell' }], matchId: `m-${seq}`, price: '3299.8000000000', size: '0.4310000000', takerSide: 'buy' } } as Frame;
}
const frames = Array.from({ length: SIZE }, (_, i) => frameAt(i + 1));
const texts = frames.map((f) => JSON.stringify(f));

type Layout = (frame: Frame, text: string) => Sent;
const layouts: Array<[string, Layout]> = [
  ['JSON + framed copy (before)', (frame, text) => { const data = Buffer.from(text); return { frame, data, wire: wireFrame(data) }; }],
  ['frame only, JSON a view (now)', (frame, text) => ({ frame, ...framedText(text) })],
];

const MiB = 1024 * 1024;
function held(layout: Layout): { arrayBuffers: number; heap: number } {
  gc();
  const before = process.memoryUsage();
  const h = new History(SIZE);
  for (let i = 0; i < SIZE; i++) h.push(layout(frames[i]!, texts[i]!));
  gc();
  const after = process.memoryUsage();
  if (h.size !== SIZE) throw new Error('history not full');
  return { arrayBuffers: (after.arrayBuffers - before.arrayBuffers) / MiB, heap: (after.heapUsed - before.heapUsed) / MiB };
}

/** ns per frame to make its bytes (what publish does once per frame, and delivery used to finish). */
function cost(layout: Layout): number {
  let sink = 0;
  const t = process.hrtime.bigint();
  for (let r = 0; r < 20; r++) for (let i = 0; i < SIZE; i++) sink += layout(frames[i]!, texts[i]!).wire.length;
  const ns = Number(process.hrtime.bigint() - t) / (20 * SIZE);
  if (sink === 0) throw new Error('nothing framed');
  return ns;
}

const mem = layouts.map(([, l]) => held(l));
for (const [, l] of layouts) cost(l); // warm-up
const best = layouts.map(() => Infinity);
for (let round = 0; round < 7; round++) layouts.forEach(([, l], i) => (best[i] = Math.min(best[i]!, cost(l))));

const meanBytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0) / SIZE;
console.log(`node ${process.version}, ${cpus().length} cores, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}; ${SIZE} frames, mean ${meanBytes.toFixed(0)} bytes of JSON`);
console.log('| Layout | Bytes held (arrayBuffers) | Heap held | Making a frame\'s bytes (best of 7) |');
console.log('|---|---|---|---|');
layouts.forEach(([name], i) => console.log(`| ${name} | ${mem[i]!.arrayBuffers.toFixed(2)} MiB | ${mem[i]!.heap.toFixed(2)} MiB | ${best[i]!.toFixed(0)} ns |`));
