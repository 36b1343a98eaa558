// The client against the whole stack: reference engine → reference indexer → PostgreSQL →
// gateway (proxy, guards, reads, live stream). Proves, end to end, that
//  - the faucet cooldown comes from the mirror and survives a gateway restart;
//  - the stream client's reconnect is gapless: fills made while its socket was down come back
//    through the gateway's replay (since=), none twice, without any REST backfill.
import type { FrameKind } from '../../../packages/client/src/engine-events.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testGateway, testRecordedChain } from '../../support/stacks.js';
import type { RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { GatewayClient, GatewayError, localParty, PositionsStore, StreamClient, type PartySigner, type StreamMessage, type WebSocketCtor, type WebSocketLike } from '../../../packages/client/src/index.js';
import type { TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';

describe('client on the full stack', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  let gw: TestGateway;
  let alice: PartySigner;
  let bob: PartySigner;
  let a: GatewayClient;
  let b: GatewayClient;
  const env = () => ({ DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, FAUCET_ENABLED: 'true', FAUCET_AMOUNT: '50000', RATE_LIMIT_MAX: '100000' });

  const stacks = fileScope();
  beforeAll(async () => {
    ({ engine, db, indexer } = await testRecordedChain(stacks, { migrate: false }));
    gw = await testGateway(stacks, env(), { listen: true });
    await gw.deps.live!.start();
    alice = await localParty('alice');
    bob = await localParty('bob');
    a = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
    b = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
    expect((await a.createSession(alice)).ok).toBe(true);
    expect((await b.createSession(bob)).ok).toBe(true);
  });

  it('keeps the faucet cooldown across a gateway restart (read from the mirror)', async (ctx) => {
    expect(await a.faucet(alice.party)).toMatchObject({ party: alice.party, newBalance: '50000.0000000000' });
    expect(await b.faucet(bob.party)).toMatchObject({ party: bob.party });
    await indexer.waitFor(engine.engine.log.maxSeq, 5_000);
    await eventually(async () => (await db.sql`SELECT count(*)::int AS n FROM deposits WHERE source = 'faucet'`)[0]!.n === 2, { what: 'mirror deposits' });
    const fresh = await testGateway(ctx, env(), { listen: true, overrides: { live: null } });
    const c = new GatewayClient({ baseUrl: fresh.url, retry: { retries: 0 } });
    c.session = a.session;
    const err = (await c.faucet(alice.party).catch((e: unknown) => e)) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(429);
    expect(err.body.retryAfterS).toBeGreaterThan(3500);
  });

  it('a refused upgrade reaches the app with the gateway status and code, and the loop stops', async () => {
    const refusals: GatewayError[] = [];
    const states: string[] = [];
    const open = (client: GatewayClient, options: { kinds?: FrameKind[]; party?: string[] }) =>
      new StreamClient({ client, ...options, WebSocket: WebSocket as unknown as WebSocketCtor, reconnect: { baseDelayMs: 10 }, onMessage: () => {}, onState: (s) => states.push(s), onRefused: (e) => refusals.push(e) });
    const unknownKind = open(a, { kinds: ['trades' as FrameKind /* a JavaScript caller: the types refuse it */] });
    unknownKind.start();
    await eventually(() => refusals.length === 1, { what: 'the 400' });
    expect([refusals[0]!.status, refusals[0]!.code]).toEqual([400, 'bad_request']);
    // A party stream without a session: 401.
    const anonymous = new GatewayClient({ baseUrl: gw.url });
    const noSession = open(anonymous, { party: [alice.party] });
    noSession.start();
    await eventually(() => refusals.length === 2, { what: 'the 401' });
    expect([refusals[1]!.status, refusals[1]!.code]).toEqual([401, 'unauthorized']);
    expect(states.filter((s) => s === 'refused')).toHaveLength(2);
    expect(states.filter((s) => s === 'connecting')).toHaveLength(2); // no retry after a 4xx
  });

  it('reconnects without a gap: fills made while disconnected are replayed by the gateway, then live resumes', { timeout: 60_000 }, async () => {
    const sockets: WebSocketLike[] = [];
    // A constructor that records each socket it makes, so the test can drop one.
    const Recording = function (this: unknown, url: string) {
      const ws = new WebSocket(url) as unknown as WebSocketLike;
      sockets.push(ws);
      return ws;
    } as unknown as WebSocketCtor;
    const messages: StreamMessage[] = [];
    const states: string[] = [];
    const positions = new PositionsStore(alice.party);
    const stream = new StreamClient({
      client: a,
      party: [alice.party],
      kinds: ['position.update'],
      markets: ['BTC-PERP'],
      WebSocket: Recording,
      onState: (s) => states.push(s),
      // The first retry waits 1 s (random 0 → half of 2 s): the trades below land inside the gap.
      reconnect: { baseDelayMs: 2000, maxDelayMs: 4000, random: () => 0 },
      onMessage: (m) => {
        messages.push(m);
        if (m.source === 'live') positions.applyFrame(m.frame);
        else if (m.source === 'backfill') positions.applyEvent(m.event);
      },
    });
    const trade = async (price: string) => {
      expect(await b.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price })).toMatchObject({ ok: true });
      expect(await a.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price })).toMatchObject({ ok: true, status: 'filled' });
    };
    try {
      stream.start();
      await eventually(() => states.at(-1) === 'live', { what: 'first socket live' });
      // The gateway's side of the opening done (the client is 'live' once the socket opens): its subscription confirmed.
      await eventually(() => messages.some((m) => m.source === 'control' && m.message.kind === 'stream.subscribed'), { what: 'the subscription confirmed' });
      await trade('60000');
      const seqFrames = () => messages.filter((m) => m.source === 'live' && !m.frame.snapshot && typeof m.frame.seq === 'number');
      await eventually(() => seqFrames().length > 0, { what: 'first position frame' });
      const liveBefore = seqFrames().length;

      // Drop the socket, trade twice while it is down.
      states.length = 0;
      sockets[0]!.close();
      await trade('60100');
      await trade('60200');
      await indexer.waitFor(engine.engine.log.maxSeq, 5_000);
      await eventually(() => states.includes('live'), { what: 'reconnected' });
      // And one more, live again.
      await trade('60300');
      await eventually(() => positions.open()[0]?.size === '0.0400000000', { what: 'position 0.04', timeoutMs: 15_000 });

      // Everything came from the socket: the replay covered the outage, REST was not needed.
      expect(messages.filter((m) => m.source === 'backfill')).toHaveLength(0);
      const liveSeqs = seqFrames().map((m) => (m as { frame: { seq: number } }).frame.seq);
      expect(liveSeqs).toHaveLength(liveBefore + 3);
      expect(new Set(liveSeqs).size).toBe(liveSeqs.length); // nothing twice
      expect([...liveSeqs].sort((x, y) => x - y)).toEqual(liveSeqs); // in order
      expect(states.slice(0, 3)).toEqual(['waiting', 'connecting', 'live']);
      expect(positions.open()).toHaveLength(1);
      // The client opted into control messages: it saw its subscription (with the epoch) each time.
      expect(messages.filter((m) => m.source === 'control' && m.message.kind === 'stream.subscribed').length).toBeGreaterThanOrEqual(2);
    } finally {
      stream.stop();
    }
  });
});
