// A small gateway speaking the stream protocol of docs/stream.md over real HTTP + WebSocket on
// loopback, for the client's unit tests: replay after `since=`, `stream.gap` beyond a bounded
// history, `stream.reset` on an epoch mismatch, heartbeats, refusals (also answered to a plain GET,
// 426 when the upgrade would pass), a 401 with `serverTime` for a signature timestamp outside the
// ±30 s window, and `/v1/events` as a mirror that trails the stream by a settable number of seqs.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeFrame {
  kind: string;
  seq: number;
  ts: string;
  market?: string;
  userParty?: string;
  party?: string;
  interval?: string;
  snapshot?: true;
  payload: Record<string, unknown>;
}

export interface FakeStreamGateway {
  url: string;
  /** Every frame published, in order (the "engine log" of the fake). */
  log: FakeFrame[];
  /** Replay history size in frames (older frames are beyond it: `stream.gap`). */
  historySize: number;
  epoch: string;
  /** The mirror (`/v1/events`) holds events up to head - mirrorLag. */
  mirrorLag: number;
  /** When set, every upgrade (and the plain GET) is refused with this. */
  refuse: { status: number; code: string; error?: string } | null;
  /** Sessions the fake says have expired. */
  expiredSessions: Set<string>;
  /** Server clock offset from the real clock (ms). */
  clockOffsetMs: number;
  /** Stop writing to sockets without closing them (a half-open connection as the client sees it). */
  silent: boolean;
  upgrades: URL[];
  probes: URL[];
  eventQueries: URL[];
  sockets: WebSocket[];
  publish(frame: Omit<FakeFrame, 'ts'> & { ts?: string }): void;
  /** Publishes `count` trade frames of fresh seqs; returns the last seq. */
  publishTrades(count: number): number;
  head(): number;
  close(): Promise<void>;
}

const TS = '2026-11-21T10:00:00.000Z';

export async function startFakeStreamGateway(): Promise<FakeStreamGateway> {
  const server: Server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const live = new Set<WebSocket>();
  const fake: FakeStreamGateway = {
    url: '',
    log: [],
    historySize: 10_000,
    epoch: 'e1',
    mirrorLag: 0,
    refuse: null,
    expiredSessions: new Set(),
    clockOffsetMs: 0,
    silent: false,
    upgrades: [],
    probes: [],
    eventQueries: [],
    sockets: [],
    publish(f) {
      const frame = { ts: TS, ...f } as FakeFrame;
      fake.log.push(frame);
      if (!fake.silent) for (const ws of live) ws.send(JSON.stringify(frame));
    },
    publishTrades(count) {
      let seq = fake.head();
      for (let i = 0; i < count; i++) {
        seq++;
        fake.publish({ kind: 'trade', seq, market: 'BTC-PERP', payload: { side: 'buy', size: '1.0000000000', price: `${seq}.0000000000` } });
      }
      return seq;
    },
    head: () => fake.log.at(-1)?.seq ?? 0,
    close: async () => {
      for (const ws of fake.sockets) ws.terminate();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  /** The upgrade's checks; answers the refusal or null when the upgrade would be accepted. */
  const check = (u: URL): { status: number; body: Record<string, unknown> } | null => {
    if (fake.refuse) return { status: fake.refuse.status, body: { error: fake.refuse.error ?? fake.refuse.code, code: fake.refuse.code } };
    const sig = u.searchParams.get('sig');
    const now = Date.now() + fake.clockOffsetMs;
    if (sig) {
      const tsMs = Number(sig.split('.')[0]);
      if (Math.abs(tsMs - now) > 30_000) return { status: 401, body: { error: 'signature timestamp is outside the ±30 s window', code: 'unauthorized', serverTime: now } };
      if (fake.expiredSessions.has(u.searchParams.get('sessionId') ?? '')) return { status: 401, body: { error: 'session expired', code: 'unauthorized' } };
    }
    return null;
  };

  server.on('request', (req: IncomingMessage, res) => {
    const u = new URL(req.url!, 'http://x');
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify(body));
    if (u.pathname === '/v1/stream') {
      fake.probes.push(u);
      const refusal = check(u);
      return refusal ? json(refusal.status, refusal.body) : json(426, { error: 'upgrade required', code: 'upgrade_required' });
    }
    if (u.pathname === '/v1/time') {
      const now = Date.now() + fake.clockOffsetMs;
      return json(200, { serverTime: now, iso: new Date(now).toISOString() });
    }
    if (u.pathname === '/v1/events') {
      fake.eventQueries.push(u);
      const since = Number(u.searchParams.get('since') ?? 0);
      const limit = Number(u.searchParams.get('limit') ?? 100);
      const user = u.searchParams.get('user');
      const upTo = fake.head() - fake.mirrorLag;
      // One raw event per seq (the fake's frames stand for the events they came from).
      const seqs = [...new Set(fake.log.filter((f) => !f.snapshot && f.kind !== 'orderbook.snapshot').map((f) => f.seq))].filter((s) => s > since && s <= upTo);
      const events = seqs
        .map((seq) => fake.log.find((f) => f.seq === seq && !f.snapshot)!)
        .filter((f) => !user || f.userParty === user || f.party === user)
        .map((f) => ({ seq: f.seq, kind: 'engine.order_filled', ts: f.ts, market: f.market, payload: { from: f.kind } }));
      const page = events.slice(0, limit);
      return json(200, { items: page, nextCursor: events.length > limit ? page.at(-1)!.seq : null });
    }
    json(404, { error: 'not found', code: 'not_found' });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const u = new URL(req.url!, 'http://x');
    fake.upgrades.push(u);
    const refusal = check(u);
    if (refusal) {
      const body = JSON.stringify(refusal.body);
      socket.end(`HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      fake.sockets.push(ws);
      const send = (m: unknown) => !fake.silent && ws.send(JSON.stringify(m));
      const control = u.searchParams.get('control') === 'true' || u.searchParams.has('since');
      const since = u.searchParams.has('since') ? Number(u.searchParams.get('since')) : null;
      const headSeq = fake.log.length ? fake.head() : null;
      if (control) send({ kind: 'stream.subscribed', ts: TS, payload: { kinds: null, markets: null, marketsIgnored: false, intervals: null, parties: [], since, epoch: fake.epoch, headSeq } });
      const history = fake.log.slice(-fake.historySize).filter((f) => !f.snapshot);
      if (since !== null) {
        const epoch = u.searchParams.get('epoch');
        if (epoch !== null && epoch !== fake.epoch) {
          send({ kind: 'stream.reset', seq: fake.head(), ts: TS, payload: { epoch: fake.epoch, previousEpoch: epoch, reason: 'epoch_mismatch' } });
        } else {
          const oldest = history[0]?.seq ?? null;
          if (oldest === null ? since < fake.head() : since < oldest - 1) {
            send({ kind: 'stream.gap', ts: TS, payload: { requestedSince: since, oldestAvailableSeq: oldest, backfill: `/v1/events?since=${since}` } });
          }
          for (const f of history) if (f.seq > since) send(f);
        }
      }
      if (u.searchParams.get('snapshot') !== 'false') {
        send({ kind: 'orderbook.snapshot', seq: fake.head(), ts: TS, market: 'BTC-PERP', snapshot: true, payload: { depth: 1, bids: [], asks: [] } });
      }
      live.add(ws);
      const hb = Number(u.searchParams.get('heartbeat') ?? 0);
      const timer = hb > 0 ? setInterval(() => send({ kind: 'stream.heartbeat', seq: fake.head(), ts: TS, payload: { headSeq: fake.head() } }), hb * 1000) : null;
      ws.on('close', () => {
        live.delete(ws);
        if (timer) clearInterval(timer);
      });
    });
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
