// Bandwidth (docs/stream.md "Compression", "Throttled book views") against the reference engine: a
// throttled book view conflates deltas (fewer frames) while its bookSeq chain and checksums stay
// exact and its book ends equal to an unthrottled view's and the engine's; permessage-deflate is
// negotiated only for connections that ask (compress=deflate) and WS_DEFLATE allows, and counted.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { http } from '../../sandbox/engine/helpers.js';
import { deskTrader } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/fleet.js';
import { connect, wsUrl, type Msg } from '../../integration/stream/helpers.js';
import { DeltaOrderBook, type GatewayClient, placeOrders, type OrderRequest } from '../../../packages/client/src/index.js';

const MARKET = 'ETH-PERP';

describe('throttled book views and deflate', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let maker: GatewayClient;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', WS_ORDERBOOK_POLL_MS: '60000' }, { markets: true });
    maker = await deskTrader(gw.url, engine, 'maker', '100000000');
  });

  it('a throttled view sends fewer deltas, each chained and checksummed, ending at the engine\'s book', async () => {
    const q = `kinds=orderbook.delta&markets=${MARKET}&depth=50`;
    const plain = await connect(gw.url, q);
    const slow = await connect(gw.url, `${q}&throttle=500`);
    const fast = await connect(gw.url, `${q}&throttle=100`);
    const books = [plain, slow, fast].map(() => new DeltaOrderBook(MARKET));
    const results: string[][] = [[], [], []];
    const clients = [plain, slow, fast];
    const applied = clients.map(() => 0);
    const feed = () => {
      clients.forEach((c, i) => {
        for (const m of c.messages.slice(applied[i])) {
          if (m.kind === 'orderbook.snapshot' || m.kind === 'orderbook.delta') results[i]!.push(books[i]!.apply(m as never));
        }
        applied[i] = c.messages.length;
      });
    };
    await Promise.all(clients.map((c) => c.waitFor((ms) => ms.some((m) => m.kind === 'orderbook.snapshot'))));
    // 10 batches of 10 orders, 30 ms apart: the book changes ~10 times within each 500 ms.
    const flowStarted = performance.now();
    for (let b = 0; b < 10; b++) {
      const orders: OrderRequest[] = Array.from({ length: 10 }, (_, i) => ({ market: MARKET, side: (i % 2 === 0 ? 'buy' : 'sell') as 'buy' | 'sell', type: 'limit', size: '0.1', price: String(i % 2 === 0 ? 2000 - b * 10 - i : 2100 + b * 10 + i) }) as OrderRequest);
      await placeOrders(maker, orders);
      // Pacing, not a wait: the batches are spread over time so a throttle window sees several changes.
      await new Promise((r) => setTimeout(r, 30));
    }
    const engineBook = (await http(engine.url, 'GET', `/v1/orderbook?depth=50&market=${MARKET}`)).body as { bids: string[][]; asks: string[][] };
    const top = (b: DeltaOrderBook) => b.bids[0]?.[0];
    await waitFor(() => {
      feed();
      return books.every((b) => b.bids.length === engineBook.bids.length && b.asks.length === engineBook.asks.length);
    }, 5_000, 'every view caught up');
    feed();
    // How many 500 ms periods the changes spanned (about one on a quiet machine, more on a loaded one).
    const periods = Math.ceil((performance.now() - flowStarted) / 500);
    for (const r of results) expect(r.filter((x) => x !== 'applied')).toEqual([]);
    const levels = (b: DeltaOrderBook) => ({ bids: b.bids.map((l) => [l[0], l[1]]), asks: b.asks.map((l) => [l[0], l[1]]) });
    expect(levels(books[1]!)).toEqual(levels(books[0]!));
    expect(levels(books[2]!)).toEqual(levels(books[0]!));
    expect(levels(books[0]!)).toEqual({ bids: engineBook.bids.map((l) => [l[0], l[1]]), asks: engineBook.asks.map((l) => [l[0], l[1]]) });
    expect(top(books[1]!)).toBe(engineBook.bids[0]![0]);
    const deltas = (c: { messages: Msg[] }) => c.messages.filter((m) => m.kind === 'orderbook.delta').length;
    expect(deltas(plain)).toBeGreaterThanOrEqual(10);
    expect(deltas(slow)).toBeLessThan(deltas(plain));
    // At most one delta per 500 ms of changes, plus the first and the last.
    expect(deltas(slow)).toBeLessThanOrEqual(periods + 2);
    expect(deltas(fast)).toBeLessThanOrEqual(deltas(plain));
    // Every throttled frame keeps to the schema (the ack names the throttle).
    expect(slow.schemaErrors).toEqual([]);
    for (const c of clients) c.ws.close();
  });

  it('refuses a throttle that is not 100 or 500, or one without orderbook.delta', async () => {
    for (const q of [`kinds=orderbook.delta&throttle=250`, `kinds=trade&throttle=100`, `kinds=orderbook.delta&throttle=1e2`]) {
      const r = await fetch(`${gw.url}/v1/stream?${q}`);
      expect([q, r.status, ((await r.json()) as { code: string }).code]).toEqual([q, 400, 'bad_request']);
    }
  });

  it('a subscribe message with throttle but no orderbook.delta is refused naming throttle', async () => {
    // The refusal said only "depth" and "group", so a client that sent just `throttle` was not told which field was wrong.
    const c = await connect(gw.url, 'kinds=trade');
    try {
      c.ws.send(JSON.stringify({ op: 'subscribe', id: 'thr', kinds: ['trade'], throttle: 100 }));
      await c.waitFor((ms) => ms.some((m) => m.kind === 'stream.error'));
      const error = c.messages.find((m) => m.kind === 'stream.error')!;
      expect(error.payload).toMatchObject({ code: 'bad_request', status: 400 });
      expect(error.payload.error).toContain('throttle');
    } finally {
      c.ws.close();
    }
  });

  it('permessage-deflate: negotiated only with compress=deflate, counted, frames unchanged', async () => {
    const open = (q: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(wsUrl(gw.url, q), { perMessageDeflate: true });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const plain = await open(`kinds=trade&markets=${MARKET}`);
    const deflated = await open(`kinds=trade&markets=${MARKET}&compress=deflate`);
    expect(plain.extensions).toBe('');
    expect(deflated.extensions).toContain('permessage-deflate');
    const metric = async () => Number(/bff_ws_deflate_connections (\d+)/.exec(await (await fetch(`${gw.url}/metrics`)).text())?.[1]);
    expect(await metric()).toBe(1);
    const got: string[][] = [[], []];
    plain.on('message', (d) => got[0]!.push(d.toString()));
    deflated.on('message', (d) => got[1]!.push(d.toString()));
    await placeOrders(maker, [
      { market: MARKET, side: 'sell', type: 'limit', size: '0.1', price: '1990' },
      { market: MARKET, side: 'buy', type: 'limit', size: '0.1', price: '1990' },
    ]);
    await waitFor(() => got[0]!.length > 0 && got[1]!.length === got[0]!.length, 5_000, 'trades on both');
    expect(got[1]).toEqual(got[0]);
    deflated.close();
    plain.close();
    await waitFor(async () => (await metric()) === 0, 5_000, 'gauge back to 0');
    // The bytes on the wire: a big book snapshot (100+ levels) read by both, the deflated far smaller.
    await placeOrders(maker, Array.from({ length: 50 }, (_, i) => ({ market: MARKET, side: 'buy', type: 'limit', size: '0.1', price: String(1500 + i) }) as OrderRequest));
    await placeOrders(maker, Array.from({ length: 50 }, (_, i) => ({ market: MARKET, side: 'sell', type: 'limit', size: '0.1', price: String(2600 + i) }) as OrderRequest));
    const wire = async (q: string) => {
      // The listener before the open: the snapshot can come in the upgrade's own TCP chunk.
      const ws = new WebSocket(wsUrl(gw.url, `kinds=orderbook.delta&markets=${MARKET}&depth=200${q}`), { perMessageDeflate: true });
      const texts: string[] = [];
      ws.on('message', (d) => texts.push(d.toString()));
      await waitFor(() => texts.some((t) => t.includes('"orderbook.snapshot"')), 5_000, 'snapshot');
      const read = (ws as unknown as { _socket: { bytesRead: number } })._socket.bytesRead;
      ws.close();
      return { read, text: texts.find((t) => t.includes('"orderbook.snapshot"'))! };
    };
    const p = await wire('');
    const d = await wire('&compress=deflate');
    expect(JSON.parse(d.text).payload.bids).toEqual(JSON.parse(p.text).payload.bids);
    expect(p.text.length).toBeGreaterThan(5_000);
    expect(d.read).toBeLessThan(p.read * 0.6);
  });

  it('WS_DEFLATE=false: never negotiated', async (ctx) => {
    const off = await testLiveGateway(ctx, engine, { WS_DEFLATE: 'false' });
    const ws = new WebSocket(wsUrl(off.url, 'kinds=trade&compress=deflate'), { perMessageDeflate: true });
    await new Promise((r) => ws.once('open', r));
    expect(ws.extensions).toBe('');
    ws.close();
  });
});
