// The stream client's gapless reconnect against a tiny real WebSocket + `/v1/events` server on
// loopback: frames lost while disconnected come back through the REST backfill, in order, before
// any live frame, and live frames the backfill already covered are not delivered twice.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer, WebSocket } from 'ws';
import { GatewayClient, localParty, prepareSession, Session, StreamClient, type StreamMessage, type WebSocketCtor } from '../../../packages/client/src/index.js';
import { importPublicKey, signedPayload, verifySignature } from '../../../src/auth/signature.js';

interface Fake {
  url: string;
  events: { seq: number; kind: string; ts: string; market?: string; party?: string; payload: object }[];
  sockets: WebSocket[];
  upgrades: URL[];
  eventCalls: string[];
  failEvents: number;
  onConnect: (ws: WebSocket, n: number) => void;
  server: Server;
}

const ts = '2026-11-21T10:00:00.000Z';
const trade = (seq: number) => ({ kind: 'trade', ts, seq, market: 'BTC-PERP', payload: { side: 'buy', size: '1.0000000000', price: '1.0000000000' } });
const rawFill = (seq: number) => ({ seq, kind: 'engine.order_filled', ts, market: 'BTC-PERP', payload: { matchId: `m${seq}`, legs: [] } });

async function startFake(): Promise<Fake> {
  const server = createServer();
  const fake: Fake = { url: '', events: [], sockets: [], upgrades: [], eventCalls: [], failEvents: 0, onConnect: () => {}, server };
  server.on('request', (req, res) => {
    const u = new URL(req.url!, 'http://x');
    fake.eventCalls.push(u.search);
    if (u.pathname !== '/v1/events') return void res.writeHead(404).end();
    if (fake.failEvents > 0) {
      fake.failEvents--;
      return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down","code":"database_unavailable"}');
    }
    const since = Number(u.searchParams.get('since'));
    // Pages of two, slowly, so live frames arrive while the backfill runs.
    const page = fake.events.filter((e) => e.seq > since).slice(0, 2);
    const more = fake.events.some((e) => e.seq > (page.at(-1)?.seq ?? Infinity));
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items: page, nextCursor: more ? page.at(-1)!.seq : null }));
    }, 40);
  });
  const wss = new WebSocketServer({ server, path: '/v1/stream' });
  wss.on('connection', (ws, req) => {
    fake.sockets.push(ws);
    fake.upgrades.push(new URL(req.url!, 'http://x'));
    fake.onConnect(ws, fake.sockets.length);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

describe('StreamClient reconnect', () => {
  let fake: Fake;
  let stream: StreamClient | null = null;
  beforeEach(async () => {
    fake = await startFake();
  });
  afterEach(async () => {
    stream?.stop();
    for (const s of fake.sockets) s.terminate();
    await new Promise<void>((r) => fake.server.close(() => r()));
  });

  function summary(messages: StreamMessage[]) {
    return messages.map((m) => (m.source === 'live' ? `live:${m.frame.kind}:${m.frame.seq}` : `backfill:${m.event.kind}:${m.event.seq}`));
  }

  async function until(check: () => boolean, ms = 5000) {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('backfills the gap through /v1/events (all pages) before resuming live frames, without duplicates', async () => {
    fake.events = [1, 2, 3, 4, 5, 6, 7].map(rawFill);
    fake.onConnect = (ws, n) => {
      if (n === 1) {
        ws.send(JSON.stringify(trade(1)));
        ws.send(JSON.stringify(trade(2)));
        // The connection drops; events 3..7 happen meanwhile.
        setTimeout(() => ws.terminate(), 50);
      } else {
        // The new socket replays some frames the backfill will cover, then new ones.
        for (const f of [trade(6), trade(7), { ...trade(8), kind: 'position.update', userParty: 'a' }, trade(8), trade(8)]) ws.send(JSON.stringify(f));
        ws.send(JSON.stringify({ kind: 'orderbook.snapshot', ts, seq: 3, market: 'BTC-PERP', payload: { depth: 1, bids: [], asks: [] } }));
      }
    };
    const messages: StreamMessage[] = [];
    const client = new GatewayClient({ baseUrl: fake.url, retry: { retries: 0 } });
    stream = new StreamClient({
      client,
      markets: ['BTC-PERP'],
      onMessage: (m) => messages.push(m),
      WebSocket: WebSocket as unknown as WebSocketCtor,
      reconnect: { baseDelayMs: 20, maxDelayMs: 40, random: () => 0 },
    });
    stream.start();
    await until(() => messages.length >= 10);
    await new Promise((r) => setTimeout(r, 100));
    expect(summary(messages)).toEqual([
      'live:trade:1',
      'live:trade:2',
      'backfill:engine.order_filled:3',
      'backfill:engine.order_filled:4',
      'backfill:engine.order_filled:5',
      'backfill:engine.order_filled:6',
      'backfill:engine.order_filled:7',
      'live:position.update:8',
      'live:trade:8',
      'live:orderbook.snapshot:3',
    ]);
    expect(fake.eventCalls).toEqual(['?limit=1000&since=2', '?limit=1000&since=4', '?limit=1000&since=6']);
    expect(stream.lastSeq).toBe(8);
    expect(fake.upgrades[0]!.searchParams.get('markets')).toBe('BTC-PERP');
  });

  it('starts over when the backfill fails, still without a gap', async () => {
    fake.events = [1, 2, 3].map(rawFill);
    fake.failEvents = 1;
    fake.onConnect = (ws) => ws.send(JSON.stringify(trade(4)));
    const messages: StreamMessage[] = [];
    const errors: unknown[] = [];
    stream = new StreamClient({
      client: new GatewayClient({ baseUrl: fake.url, retry: { retries: 0 } }),
      lastSeq: 1,
      onMessage: (m) => messages.push(m),
      onError: (e) => errors.push(e),
      WebSocket: WebSocket as unknown as WebSocketCtor,
      reconnect: { baseDelayMs: 20, maxDelayMs: 40, random: () => 0 },
    });
    stream.start();
    await until(() => messages.length >= 3);
    expect(summary(messages)).toEqual(['backfill:engine.order_filled:2', 'backfill:engine.order_filled:3', 'live:trade:4']);
    expect(fake.sockets.length).toBe(2);
    expect(errors.length).toBeGreaterThanOrEqual(1);
  });

  it('proves the session in the upgrade query and keeps other parties\' backfilled events out', async () => {
    const p = await localParty('streamer');
    const prepared = await prepareSession(p, 60_000);
    const client = new GatewayClient({ baseUrl: fake.url, retry: { retries: 0 } });
    client.session = new Session(p.party, 'sess-s', Date.now() + 60_000, prepared.key.privateKey);
    fake.events = [
      { seq: 2, kind: 'inbound.deposit', ts, party: 'other::x', payload: {} },
      { seq: 3, kind: 'inbound.deposit', ts, party: p.party, payload: {} },
      { seq: 4, kind: 'engine.tick_start', ts, payload: { tick: 1 } },
    ];
    const messages: StreamMessage[] = [];
    stream = new StreamClient({
      client,
      party: [p.party],
      kinds: ['inbound.deposit', 'position.update'],
      lastSeq: 1,
      onMessage: (m) => messages.push(m),
      WebSocket: WebSocket as unknown as WebSocketCtor,
    });
    stream.start();
    await until(() => stream!.lastSeq === 4);
    expect(summary(messages)).toEqual(['backfill:inbound.deposit:3']);
    const q = fake.upgrades[0]!.searchParams;
    expect(q.get('user')).toBe(p.party);
    expect(q.get('sessionId')).toBe('sess-s');
    expect(q.get('party')).toBe(p.party);
    expect(q.get('kinds')).toBe('inbound.deposit,position.update');
    const [t, sig] = q.get('sig')!.split('.') as [string, string];
    expect(verifySignature(importPublicKey(prepared.key.publicKeyHex)!, signedPayload('GET', '/v1/stream', Number(t), ''), Buffer.from(sig, 'hex'))).toBe(true);
  });
});
