// The WebSocket side: filters (docs/stream.md), party proof, refusals, slow consumers,
// replay with `since`, shutdown, the AsyncAPI document.
import { generateKeyPairSync, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, B, simpleMatch, tick } from '../../unit/projections/fixtures.js';
import WebSocket from 'ws';
import { connect, refused, sleep, startStack, wsUrl, type Stack } from './helpers.js';
import { waitFor } from '../../support/scripted-sse.js';
import { eventually } from '../../support/eventually.js';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

describe('stream filters (AUTH_DISABLED=true)', () => {
  let s: Stack;
  let seq = 0;
  beforeAll(async () => {
    s = await startStack();
    s.engine.markets = [
      { symbol: 'BTC-PERP', status: 'active' },
      { symbol: 'ETH-PERP', status: 'active' },
    ];
    await s.engine.waitFor(() => s.engine.open === 1);
    await s.live.poller!.pollOnce(); // market list known: rule 1 can be judged
  });
  afterAll(async () => s.close());

  it('kinds, markets (rule 1), intervals and party each narrow exactly what they should', async () => {
    // Live frames only here (snapshot=false): the state on subscribe has its own tests (snapshot.test.ts).
    const clients = {
      all: await connect(s.gw.url, 'snapshot=false'),
      trades: await connect(s.gw.url, 'kinds=trade&snapshot=false'),
      eth: await connect(s.gw.url, 'markets=ETH-PERP&snapshot=false'),
      unknownMarkets: await connect(s.gw.url, 'markets=btc-perp,DOGE-PERP&kinds=trade&control=true&snapshot=false'),
      oneHour: await connect(s.gw.url, 'intervals=1h&snapshot=false'),
      alice: await connect(s.gw.url, `party=${A}&kinds=position.update,balance.update,engine.order_cancelled&snapshot=false`),
      both: await connect(s.gw.url, `party=${A},${B}&kinds=balance.update&snapshot=false`),
    };
    const btc = simpleMatch(++seq, at(1), '100', '1');
    const eth = simpleMatch(++seq, at(2), '7', '2', 'ETH-PERP');
    const cancel = { seq: ++seq, kind: 'engine.order_cancelled', ts: at(3), market: 'BTC-PERP', party: A, payload: { orderId: 'o1', reason: 'user' } };
    const t = tick(++seq, at(4));
    // A barrier every filter admits (an ETH match of A and B): frames come in seq order, so once a
    // client has the barrier, everything the four events gave it is in, and nothing more is due.
    const barrier = simpleMatch(++seq, at(5), '8', '1', 'ETH-PERP');
    s.engine.push(btc, eth, cancel, t, barrier);
    for (const c of Object.values(clients)) await c.waitFor((m) => m.some((x) => x.seq === barrier.seq));
    const before = (c: { frames(): Array<{ kind: string; market?: string; interval?: string; seq?: number; userParty?: string; party?: string }> }) =>
      c.frames().filter((f) => f.seq! < barrier.seq);
    const kinds = (c: { frames(): Array<{ kind: string; market?: string; interval?: string; seq?: number }> }) =>
      before(c).map((f) => `${f.seq}:${f.kind}${f.market ? `@${f.market}` : ''}${f.interval ? `/${f.interval}` : ''}`);

    // No party: public frames only (no position/balance/user-scoped passthrough).
    expect(kinds(clients.all)).toEqual([
      '1:engine.order_filled@BTC-PERP', '1:trade@BTC-PERP',
      '1:candle.update@BTC-PERP/1m', '1:candle.update@BTC-PERP/5m', '1:candle.update@BTC-PERP/15m', '1:candle.update@BTC-PERP/30m',
      '1:candle.update@BTC-PERP/1h', '1:candle.update@BTC-PERP/4h', '1:candle.update@BTC-PERP/1d', '1:candle.update@BTC-PERP/1w',
      '2:engine.order_filled@ETH-PERP', '2:trade@ETH-PERP',
      '2:candle.update@ETH-PERP/1m', '2:candle.update@ETH-PERP/5m', '2:candle.update@ETH-PERP/15m', '2:candle.update@ETH-PERP/30m',
      '2:candle.update@ETH-PERP/1h', '2:candle.update@ETH-PERP/4h', '2:candle.update@ETH-PERP/1d', '2:candle.update@ETH-PERP/1w',
      '4:engine.tick_start',
    ]);
    expect(kinds(clients.trades)).toEqual(['1:trade@BTC-PERP', '2:trade@ETH-PERP']);
    // markets narrows frames that have a market; market-less frames still come.
    expect(kinds(clients.eth)).toEqual([
      '2:engine.order_filled@ETH-PERP', '2:trade@ETH-PERP',
      '2:candle.update@ETH-PERP/1m', '2:candle.update@ETH-PERP/5m', '2:candle.update@ETH-PERP/15m', '2:candle.update@ETH-PERP/30m',
      '2:candle.update@ETH-PERP/1h', '2:candle.update@ETH-PERP/4h', '2:candle.update@ETH-PERP/1d', '2:candle.update@ETH-PERP/1w',
      '4:engine.tick_start',
    ]);
    // Rule 1: no listed market is an engine market → ignored, every market comes, no error.
    expect(kinds(clients.unknownMarkets)).toEqual(['1:trade@BTC-PERP', '2:trade@ETH-PERP']);
    expect(clients.unknownMarkets.messages[0]).toMatchObject({ kind: 'stream.subscribed', payload: { markets: null, marketsIgnored: true } });
    // intervals narrows candles only.
    expect(kinds(clients.oneHour)).toEqual([
      '1:engine.order_filled@BTC-PERP', '1:trade@BTC-PERP', '1:candle.update@BTC-PERP/1h',
      '2:engine.order_filled@ETH-PERP', '2:trade@ETH-PERP', '2:candle.update@ETH-PERP/1h',
      '4:engine.tick_start',
    ]);
    // party: that party's legs and user-scoped passthrough only.
    expect(before(clients.alice).map((f) => [f.seq, f.kind, f.userParty ?? f.party])).toEqual([
      [1, 'position.update', A], [1, 'balance.update', A],
      [2, 'position.update', A], [2, 'balance.update', A],
      [3, 'engine.order_cancelled', A],
    ]);
    expect(before(clients.both).map((f) => [f.seq, f.userParty])).toEqual([[1, A], [1, B], [2, A], [2, B]]);
    for (const c of Object.values(clients)) {
      expect(c.schemaErrors).toEqual([]);
      c.ws.close();
    }
  });

  it('refuses bad filters at upgrade with 400 and the error shape', async () => {
    expect(await refused(s.gw.url, 'kinds=trade,nope')).toEqual({
      status: 400,
      body: { code: 'bad_request', error: expect.stringContaining('"kinds": "nope" is not a frame kind') },
    });
    expect((await refused(s.gw.url, 'intervals=3m')).status).toBe(400);
    expect((await refused(s.gw.url, 'party=not-a-party')).body.code).toBe('bad_request');
    expect((await refused(s.gw.url, 'since=abc')).status).toBe(400);
    const plain = await fetch(`${s.gw.url}/v1/stream`);
    expect(plain.status).toBe(426);
    expect(await plain.json()).toEqual({ error: expect.stringContaining('WebSocket'), code: 'upgrade_required' });
  });

  it('?since replays the history after that seq, then continues live without a gap or repeat', async () => {
    const c = await connect(s.gw.url, 'kinds=engine.tick_start,trade&since=1&snapshot=false');
    const live = tick(++seq, at(5));
    s.engine.push(live);
    // Frames arrive in order: once the live one is in, everything before it is too.
    await c.waitFor((m) => m.some((x) => x.seq === live.seq));
    expect(c.messages[0]).toMatchObject({ kind: 'stream.subscribed', payload: { since: 1, kinds: ['engine.tick_start', 'trade'] } });
    // The history holds the filter test's events: its trades (2, and the barrier's 5) and tick 4.
    expect(c.frames().map((f) => `${f.seq}:${f.kind}`)).toEqual(['2:trade', '4:engine.tick_start', '5:trade', `${live.seq}:engine.tick_start`]);
    expect(c.messages.some((m) => m.kind === 'stream.gap')).toBe(false);
    c.ws.close();
  });
});

describe('replay beyond the history', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ WS_HISTORY_SIZE: '3' });
    await s.engine.waitFor(() => s.engine.open === 1);
    // The first (empty) book snapshot takes a history slot too: let it go by before the ticks.
    await s.engine.waitFor(() => s.engine.bookRequests.length === 1);
    // A bounded wait, kept: the answer to that read reaching the history, which has no seq to wait for.
    await sleep(100);
  });
  afterAll(async () => s.close());

  it('sends stream.gap with the backfill route, then what it has, then live', async () => {
    s.engine.push(...[1, 2, 3, 4, 5].map((n) => tick(n, at(n))));
    await waitFor(() => s.live.source?.position === 5, 5_000, 'ticks in the history');
    const c = await connect(s.gw.url, 'since=0&snapshot=false');
    s.engine.push(tick(6, at(6)));
    await c.waitFor((m) => m.some((x) => x.seq === 6));
    expect(c.messages.map((m) => m.kind)).toEqual(['stream.subscribed', 'stream.gap', 'engine.tick_start', 'engine.tick_start', 'engine.tick_start', 'engine.tick_start']);
    expect(c.messages[1]!.payload).toEqual({ requestedSince: 0, oldestAvailableSeq: 3, backfill: '/v1/events?since=0' });
    expect(c.frames().map((f) => f.seq)).toEqual([3, 4, 5, 6]);
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('replays nothing older than the oldestAvailableSeq it announced, even what is left of a half-evicted event', async () => {
    // A fill is several frames of one seq (passthrough, trade, candles): the history holds 3 frames,
    // so its oldest event has lost its first frames. Found by the soak: those leftovers came after
    // stream.gap although the gap said that seq was not available (the client backfills it by REST).
    s.engine.push(simpleMatch(7, at(7), '100', '1'), simpleMatch(8, at(8), '100', '1'));
    const c = await connect(s.gw.url, 'since=0&kinds=trade,engine.order_filled,candle.update&snapshot=false');
    s.engine.push(tick(9, at(9)));
    const live = await connect(s.gw.url, 'kinds=engine.tick_start');
    s.engine.push(tick(10, at(10)));
    await live.waitFor((m) => m.some((x) => x.seq === 10));
    await c.waitFor((m) => m.some((x) => x.kind === 'stream.gap'));
    const gap = c.messages.find((m) => m.kind === 'stream.gap')!;
    const oldest = gap.payload.oldestAvailableSeq as number;
    expect(oldest).toBeGreaterThan(8); // 8's first frames were evicted by its own last ones
    expect(c.frames().filter((f) => f.seq! < oldest)).toEqual([]);
    c.ws.close();
    live.ws.close();
  });
});

describe('party proof (auth enabled)', () => {
  let s: Stack;
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pubHex = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
  const proof = (tsMs = Date.now(), user = A, sessionId = 'sess-a') => {
    const sig = sign(null, Buffer.from(`GET\n/v1/stream\n${tsMs}\n`), privateKey).toString('hex');
    return `user=${encodeURIComponent(user)}&sessionId=${sessionId}&sig=${tsMs}.${sig}`;
  };
  beforeAll(async () => {
    s = await startStack({ AUTH_DISABLED: 'false' });
    s.gw.deps.sessions.add('sess-a', A, pubHex, Date.now() + 3_600_000);
    await s.engine.waitFor(() => s.engine.open === 1);
  });
  afterAll(async () => s.close());

  it('a proven party receives its frames', async () => {
    const c = await connect(s.gw.url, `party=${A}&kinds=balance.update&${proof()}`);
    s.engine.push(simpleMatch(1, at(1), '100', '1'));
    await c.waitFor((m) => m.some((x) => x.kind === 'balance.update'));
    expect(c.frames().map((f) => f.userParty)).toEqual([A]);
    c.ws.close();
  });

  it('refuses a party filter without proof (401), with a bad or replayed proof (401), for another party (403)', async () => {
    expect(await refused(s.gw.url, `party=${A}`)).toEqual({ status: 401, body: { code: 'unauthorized', error: expect.stringContaining('proof') } });
    const old = Date.now() - 60_000;
    expect((await refused(s.gw.url, `party=${A}&${proof(old)}`)).body.error).toContain('±30 s');
    expect((await refused(s.gw.url, `party=${A}&${proof(Date.now(), A, 'nope')}`)).body.error).toBe('unknown session');
    const bad = proof().replace(/sig=(\d+)\.([0-9a-f])/, (_m, ts: string, h: string) => `sig=${ts}.${h === '0' ? '1' : '0'}`);
    expect((await refused(s.gw.url, `party=${A}&${bad}`)).status).toBe(401);
    const once = proof();
    (await connect(s.gw.url, `party=${A}&${once}`)).ws.close();
    expect((await refused(s.gw.url, `party=${A}&${once}`)).body.error).toContain('replay');
    expect(await refused(s.gw.url, `party=${A},${B}&${proof()}`)).toEqual({ status: 403, body: { code: 'forbidden', error: expect.stringContaining(B) } });
  });

  /** A gateway with auth whose session lookups (a database read in production) wait for `release`. */
  const gatedStack = async (env: Record<string, string> = {}) => {
    const own = await startStack({ AUTH_DISABLED: 'false', ...env });
    const { sessions } = own.gw.deps;
    sessions.add('sess-a', A, pubHex, Date.now() + 3_600_000);
    let release = (): void => {};
    const gate = new Promise<void>((r) => (release = r));
    const lookup = sessions.get.bind(sessions);
    let waiting = 0;
    sessions.get = async (id: string) => {
      waiting++;
      await gate;
      return lookup(id);
    };
    /** Resolves once `n` upgrades are past the first checks and waiting in the session lookup. */
    const lookupsWaiting = (n: number) => waitFor(() => waiting === n, 5_000, `${n} session lookups`);
    return { own, release, lookupsWaiting };
  };

  it('answers 503 shutting_down to an upgrade whose proof was still being checked when shutdown began', async () => {
    const { own, release, lookupsWaiting } = await gatedStack();
    const answer = refused(own.gw.url, `party=${A}&${proof()}`);
    await lookupsWaiting(1);
    const closing = own.close();
    await waitFor(() => own.live.hub.isClosed, 5_000, 'shutdown to begin');
    release();
    expect(await answer).toEqual({ status: 503, body: { code: 'shutting_down', error: 'the gateway is shutting down' } });
    await closing;
  });

  it('counts upgrades whose proofs were checked at the same time against WS_MAX_CONNECTIONS', async () => {
    const { own, release, lookupsWaiting } = await gatedStack({ WS_MAX_CONNECTIONS: '1' });
    try {
      const outcome = (query: string) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(wsUrl(own.gw.url, query));
          ws.once('open', () => resolve('open'));
          ws.once('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
          ws.once('error', () => resolve('error'));
        });
      const both = Promise.all([outcome(`party=${A}&${proof()}`), outcome(`party=${A}&${proof(Date.now() + 1)}`)]);
      await lookupsWaiting(2); // both passed the limit check before their proofs
      release();
      expect((await both).sort()).toEqual(['503', 'open']);
    } finally {
      await own.close();
    }
  });

  it('without a party filter no proof is needed and only public frames come', async () => {
    const c = await connect(s.gw.url, 'kinds=balance.update,trade');
    s.engine.push(simpleMatch(2, at(2), '100', '1'));
    // An event's balance.update frames come before its trade: none can follow it.
    await c.waitFor((m) => m.some((x) => x.kind === 'trade'));
    expect(c.frames().map((f) => f.kind)).toEqual(['trade']);
    c.ws.close();
  });
});

describe('limits, slow consumers, shutdown', () => {
  it('closes a client that does not read with 4008 while a fast one keeps receiving', async () => {
    // The bound must hold a burst: one SSE chunk (10 × 16 KB here) is written to every client at once.
    const s = await startStack({ WS_CLIENT_BUFFER_BYTES: '2097152' });
    try {
      await s.engine.waitFor(() => s.engine.open === 1);
      const fast = await connect(s.gw.url, 'kinds=engine.tick_start');
      const slow = await connect(s.gw.url, 'kinds=engine.tick_start');
      (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
      const pad = 'x'.repeat(16_000);
      const N = 2000; // 32 MB: more than loopback socket buffers plus the bound hold
      // The fast client is this test process, which shares the CPU with the gateway (and, in CI, with
      // other test files): pace the engine so the fast client is never more than 40 frames (640 KB)
      // behind, far inside its 2 MiB bound, however loaded the machine. A fixed-rate burst once
      // made it fall behind and be closed with 4008 too, which was the gateway doing its job.
      let fastSeen = 0;
      fast.ws.on('message', () => fastSeen++);
      // The slow client reads again as soon as the gateway has closed it: the close frame waits behind
      // what it had not read, and a client that still reads nothing SLOW_TERMINATE_MS later is cut
      // (1006). On a loaded machine the paced burst can outlast that, so resuming only at its end
      // would test the machine's speed instead of the gateway.
      const slowSocket = (slow.ws as unknown as { _socket: { resume(): void } })._socket;
      const slowClosedByGateway = async (): Promise<boolean> =>
        (await (await fetch(`${s.gw.url}/metrics`)).text()).includes('bff_ws_slow_client_closes_total 1');
      let resumed = false;
      for (let i = 1; i <= N; i += 10) {
        s.engine.push(...Array.from({ length: 10 }, (_, k) => ({ seq: i + k, kind: 'engine.tick_start', ts: at(i + k), payload: { tick: i + k, pad } })));
        await waitFor(() => fastSeen >= i + 9 - 40, 15_000, `the fast client to read up to seq ${i + 9 - 40}`);
        if (!resumed && (await slowClosedByGateway())) {
          slowSocket.resume();
          resumed = true;
        }
      }
      await fast.waitFor((m) => m.some((x) => x.seq === N), 15_000);
      expect(fast.frames().map((f) => f.seq)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
      if (!resumed) {
        await eventually(slowClosedByGateway, { timeoutMs: 5_000, what: 'the gateway to close the slow client' });
        slowSocket.resume();
      }
      const closed = await slow.closed;
      expect(closed.code).toBe(4008);
      expect(closed.reason).toContain('slow consumer');
      expect(slow.frames().length).toBeLessThan(N);
      const metrics = await eventually(
        async () => {
          const text = await (await fetch(`${s.gw.url}/metrics`)).text();
          return text.includes('bff_ws_slow_client_closes_total 1') && text;
        },
        { timeoutMs: 5_000, what: 'the slow close counted' },
      );
      expect(metrics).toContain('bff_ws_frames_dropped_total{kind="engine.tick_start"} 1');
    } finally {
      await s.close();
    }
  }, 60_000);

  it('refuses connections past WS_MAX_CONNECTIONS with 503', async () => {
    const s = await startStack({ WS_MAX_CONNECTIONS: '1' });
    try {
      const first = await connect(s.gw.url);
      expect(await refused(s.gw.url, '')).toEqual({ status: 503, body: { code: 'too_many_connections', error: expect.stringContaining('1 connections') } });
      first.ws.close();
      await first.closed;
      await eventually(() => s.live.hub.size === 0, { timeoutMs: 5_000, what: 'the first connection gone from the hub' });
      (await connect(s.gw.url)).ws.close();
    } finally {
      await s.close();
    }
  });

  it('drops a peer that stops answering pings', async () => {
    const s = await startStack({ WS_PING_MS: '100' });
    try {
      const c = await connect(s.gw.url);
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause(); // no pongs
      await waitFor(() => s.live.hub.size === 0, 5_000, 'the silent peer dropped');
      const ok = await connect(s.gw.url); // an answering peer stays, ping after ping
      let pings = 0;
      ok.ws.on('ping', () => pings++);
      await waitFor(() => pings >= 4, 5_000, 'four pings answered');
      expect(s.live.hub.size).toBe(1);
      ok.ws.close();
    } finally {
      await s.close();
    }
  });

  it('closes every client with 1001 on shutdown', async () => {
    const s = await startStack();
    const a = await connect(s.gw.url);
    const b = await connect(s.gw.url, 'kinds=trade');
    await s.close();
    expect((await a.closed).code).toBe(1001);
    expect((await b.closed).code).toBe(1001);
  });

  it('serves the AsyncAPI description built from the frame schemas', async () => {
    const s = await startStack({}, { start: false });
    try {
      const doc = (await (await fetch(`${s.gw.url}/docs/asyncapi.json`)).json()) as any;
      expect(doc.asyncapi).toBe('3.0.0');
      expect(doc.channels.stream.address).toBe('/v1/stream');
      expect(Object.values(doc.components.messages).map((m: any) => m.name)).toEqual([
        'position.update', 'balance.update', 'account.update', 'trade', 'orderbook.snapshot', 'orderbook.delta', 'order.update', 'fill', 'open_interest.update', 'candle.update', 'candle.close', 'engine event', 'stream.subscribed', 'stream.gap',
        'stream.reset', 'stream.heartbeat', 'stream.lagging', 'stream.ack', 'stream.answer', 'stream.error', 'subscribe', 'unsubscribe', 'order.place', 'order.cancel', 'order.batch', 'order.status', 'switch.arm', 'switch.heartbeat', 'switch.disarm', 'order.replace',
      ]);
      expect(doc.channels.stream.bindings.ws.query.properties.heartbeat).toMatchObject({ minimum: 1, maximum: 300 });
      expect(doc.components.messages.candleUpdate.payload.properties.snapshot.const).toBe(true);
      expect(doc.components.messages.positionUpdate.payload.properties.payload.required).toEqual(['positionId', 'size', 'entryPrice', 'realizedPnl', 'asOfSeq']);
      expect(doc.info.description).toContain('4008');
      const openapi = (await (await fetch(`${s.gw.url}/docs/json`)).json()) as any;
      expect(openapi.paths['/v1/stream'].get.responses['426']).toBeDefined();
    } finally {
      await s.close();
    }
  });
});
